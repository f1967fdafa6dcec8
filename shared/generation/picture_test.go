package generation_test

import (
	"testing"

	"contentapi/shared/generation"
)

func TestPictureNameIsOnePerAttempt(t *testing.T) {
	base := generation.PictureName("acme", "images", 7, "a1")
	if !generation.IsPictureName(base) {
		t.Fatalf("PictureName = %q, not <32 hex>.png", base)
	}
	if again := generation.PictureName("acme", "images", 7, "a1"); again != base {
		t.Fatalf("the same attempt is named %q and %q", base, again)
	}
	seen := map[string]string{base: "base"}
	for what, name := range map[string]string{
		"account":  generation.PictureName("acme2", "images", 7, "a1"),
		"resource": generation.PictureName("acme", "documents", 7, "a1"),
		"id":       generation.PictureName("acme", "images", 8, "a1"),
		"attempt":  generation.PictureName("acme", "images", 7, "a2"),
		// The parts cannot run into each other.
		"shifted": generation.PictureName("acm", "eimages", 7, "a1"),
	} {
		if other, dup := seen[name]; dup {
			t.Errorf("another %s gives the name of %s", what, other)
		}
		seen[name] = what
	}
	for _, bad := range []string{"", "x.png", "../" + base, base + "/", "ABCDEF0123456789ABCDEF0123456789.png",
		base[1:], "0" + base, base[:32] + ".PNG", base + ".png"} {
		if generation.IsPictureName(bad) {
			t.Errorf("IsPictureName(%q)", bad)
		}
	}
}

package fold

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CAFÉ", "cafe"},
		{"my café", "my cafe"},
		{"Straße", "strasse"},
		{"ÅNGSTRÖM", "angstrom"},
		{"ﬁsh", "fish"},
		{"Ｆｕｌｌ", "full"},
		{"Crème Brûlée", "creme brulee"},
		{"ΣΊΣΥΦΟΣ", "σισυφοσ"},
		{"日本語", "日本語"},
		{"a\tb\r\nc", "a b  c"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSearchMeetsName(t *testing.T) {
	// The contract's own example: searching "CAFÉ" finds "my cafe".
	name, query := String("my cafe"), String("CAFÉ")
	if !strings.Contains(name, query) {
		t.Fatalf("folded %q does not contain folded %q", name, query)
	}
}

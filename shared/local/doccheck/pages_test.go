package doccheck

import (
	"slices"
	"testing"
)

func TestCommands(t *testing.T) {
	page := Page{Path: "README.md", Text: "A `make\npreflight` split over two lines leaves a backtick alone, and\n" +
		"`go run ./cmd/apikey list --table t` is still found.\n\n" +
		"```sh\nKEY=$(go run ./cmd/apikey create --account acme)\ncurl -s \"$API/x\" \\\n  -d a=1\nmake run   # and a comment\n```\n\n" +
		"```\ngo run ./cmd/apikey layout line, no sh block\n```\n"}
	got := Commands([]Page{page}, "go run ./cmd/apikey", "curl", "make")
	want := []string{
		"go run ./cmd/apikey create --account acme",
		`curl -s "$API/x"    -d a=1`,
		"make run   # and a comment",
		"go run ./cmd/apikey list --table t",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Commands =\n%q\nwant\n%q", got, want)
	}
}

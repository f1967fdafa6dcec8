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

func TestSentences(t *testing.T) {
	text := "# A heading. Not prose\n\n" +
		"One sentence reads go.mod and `go doc ./shared/store`. Two ends here!\n" +
		"Three is a [link. With a stop](docs/api.md#x) and ends\n\n" +
		"- an item without a stop\n" +
		"- an item over\n  two lines. And a second\n\n" +
		"```\nignored. Code.\n```\n" +
		"| a table. | row |\n"
	want := []string{
		"One sentence reads go.mod and `go doc ./shared/store`.",
		"Two ends here!",
		"Three is a [link.",
		"With a stop] and ends",
		"an item without a stop",
		"an item over two lines.",
		"And a second",
	}
	if got := Sentences(text); !slices.Equal(got, want) {
		t.Errorf("Sentences =\n%q\nwant\n%q", got, want)
	}
}

func TestInlineCode(t *testing.T) {
	text := "Run `make\ngenerate` or `go doc ./x`.\n```\n`not this`\n```\n"
	if got, want := InlineCode(text), []string{"make generate", "go doc ./x"}; !slices.Equal(got, want) {
		t.Errorf("InlineCode = %q, want %q", got, want)
	}
}

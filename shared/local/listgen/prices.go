package listgen

import (
	"bytes"
	"fmt"
	"strings"

	"contentapi/shared/generation"
)

// PriceTable is the page whose cost table is written from the declared
// prices (generation.DefaultPrices), between PriceMark and the line after
// the table's last row.
const PriceTable = "docs/generation.md"

// PriceMark opens the generated table; the table ends at the first line
// after it that is not a row.
const PriceMark = "<!-- make generate: generation.DefaultPrices -->"

// exampleTexts are the records a text model's row prices, with the tokens
// they read and write.
var exampleTexts = []struct {
	name    string
	in, out int64
}{
	{"**a blog post** (about 450 tokens in, 1,300 out)", 450, 1300},
	{"a tweet (300 in, 100 out)", 300, 100},
	{"the longest answer a template allows (4,096 tokens out)", 450, 4096},
}

// WritePrices rewrites the table after PriceMark in src from prices.
func WritePrices(src []byte, prices generation.Prices) ([]byte, error) {
	at := bytes.Index(src, []byte(PriceMark+"\n"))
	if at < 0 {
		return nil, fmt.Errorf("no %q line", PriceMark)
	}
	from := at + len(PriceMark) + 1
	end := from
	for end < len(src) && src[end] == '|' {
		nl := bytes.IndexByte(src[end:], '\n')
		if nl < 0 {
			end = len(src)
			break
		}
		end += nl + 1
	}
	var b strings.Builder
	b.WriteString("| model | list price, on demand | batch | one record | taken |\n|---|---|---|---|---|\n")
	for _, p := range prices {
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %s | %s%s |\n", p.Name, p.Model, onDemand(p), batch(p), examples(p), p.Taken, note(p))
	}
	return bytes.Join([][]byte{src[:from], []byte(b.String()), src[end:]}, nil), nil
}

func onDemand(p generation.Price) string {
	var parts []string
	if p.InputTokens > 0 || p.OutputTokens > 0 {
		parts = append(parts, fmt.Sprintf("%s per million input tokens, %s per million output tokens", p.InputTokens, p.OutputTokens))
	}
	for _, pp := range p.Pictures {
		size := "whatever its size"
		if pp.MaxPixels > 0 {
			size = fmt.Sprintf("up to %d pixels", pp.MaxPixels)
		}
		parts = append(parts, fmt.Sprintf("%s per picture, %s", pp.Price, size))
	}
	if p.Embeddings > 0 {
		parts = append(parts, fmt.Sprintf("%s per million tokens embedded", p.Embeddings))
	}
	return strings.Join(parts, "; ")
}

func batch(p generation.Price) string {
	if p.BatchInputTokens == 0 && p.BatchOutputTokens == 0 {
		return "none"
	}
	return fmt.Sprintf("%s in, %s out per million tokens", p.BatchInputTokens, p.BatchOutputTokens)
}

func examples(p generation.Price) string {
	var parts []string
	if p.InputTokens > 0 || p.OutputTokens > 0 {
		for _, e := range exampleTexts {
			parts = append(parts, fmt.Sprintf("%s: %s", e.name, p.Text(e.in, e.out)))
		}
	}
	for _, pp := range p.Pictures {
		parts = append(parts, fmt.Sprintf("%s per picture", pp.Price))
	}
	return strings.Join(parts, "; ")
}

func note(p generation.Price) string {
	if p.Note == "" {
		return ""
	}
	return "; " + p.Note
}

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/images"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// The seeded account: what a heavy user of the original app holds.
const (
	SeededDocuments = 10_000
	SeededImages    = 10_000
	// SeededResultBytes is the size of a generated document's text, ±10%.
	SeededResultBytes = 5_000
)

// Search terms the list figures use; the seeder puts them in a few
// percent of names ("café" written with its accent in some, without in
// others, so the search shows folding at work).
const (
	SearchDocuments = "cafe"
	FilterStyle     = "photography"
)

var words = strings.Fields(`
	the a an and or but of to in on for with at by from about into over after before
	between through during without within along across behind beyond under above
	our your their its this that these those every each many most some more less
	customer customers client clients team teams product products service services
	brand brands market markets content story stories idea ideas goal goals plan plans
	growth value values price prices offer offers season launch launches feature features
	design designs quality experience experiences journey community partner partners
	company companies business businesses project projects people person audience
	reader readers guest guests recipe recipes garden gardens city cities street
	travel trip trips morning evening weekend summer winter spring autumn holiday
	coffee café cafés crème brûlée croissant pâtisserie naïve résumé façade fiancée
	jalapeño piñata smörgåsbord über Zürich São Paulo Málaga Kraków Reykjavík Curaçao
	make makes made build builds built grow grows grew help helps helped share shares
	create creates created discover discovers discovered explore explores explored
	improve improves improved deliver delivers delivered enjoy enjoys enjoyed
	learn learns learned find finds found choose chooses chose keep keeps kept
	start starts started save saves saved bring brings brought offer offering
	simple simply clear clearly fresh new modern classic local global small large
	bold quiet bright warm cool honest friendly reliable practical elegant playful
	fast faster slow slower better best easy easier careful thoughtful useful
	today tomorrow yesterday always often sometimes never rarely soon already
	because while although since unless whether however therefore meanwhile
	is are was were be been being has have had will would can could should may might
	one two three four five ten hundred first second third last next whole half
	time times year years day days week weeks month months hour hours minute minutes
	way ways thing things part parts place places world home work life water light
	color colors shape shapes sound music voice word words page pages list lists
	question questions answer answers reason reasons result results step steps
	energy budget support training research data report reports tool tools
`)

var topics = []string{
	"remote work", "spring collection", "café opening", "cafe loyalty card", "product launch",
	"summer sale", "customer onboarding", "holiday menu", "crème brûlée recipe", "Zürich office",
	"São Paulo meetup", "mountain cabin", "electric bikes", "coffee subscription", "yoga studio",
	"pet adoption", "smart home", "vegan bakery", "craft brewery", "city marathon",
	"résumé tips", "job fair", "back to school", "Black Friday", "year in review",
	"Málaga trip", "piñata party", "naïve questions", "garden makeover", "sustainable fashion",
	"data privacy", "team offsite", "podcast season", "charity run", "wine tasting",
	"Kraków weekend", "startup pitch", "open source release", "museum night", "food truck",
}

var audiences = []string{"small business owners", "new customers", "our newsletter readers",
	"parents", "students", "developers", "travellers", "local residents", "investors", "the press"}
var tones = []string{"friendly", "formal", "playful", "confident", "warm", "persuasive", "neutral"}

var subjects = []string{
	"lighthouse", "fox", "château", "café terrace", "mountain lake", "city skyline", "old tram",
	"crème brûlée", "jalapeño peppers", "koi pond", "robot", "owl", "sailboat", "desert road",
	"cherry blossoms", "Zürich rooftops", "São Paulo street", "Reykjavík harbour", "piñata",
	"vintage car", "astronaut", "dragon", "bicycle", "library", "waterfall", "ñandú", "kitten",
}
var moods = []string{"Misty", "Golden", "Quiet", "Neon", "Rainy", "Sunlit", "Frozen", "Ancient",
	"Tiny", "Giant", "Dreamy", "Stormy", "Café-au-lait", "Moonlit", "Busy", "Lonely"}
var settings = []string{"at dawn", "at dusk", "in the fog", "under the stars", "in winter",
	"by the sea", "in the city", "in a forest", "on Mars", "in the rain", "at noon", ""}

// Seeder makes the seeded records; a fixed seed makes every run alike.
type Seeder struct{ r *rand.Rand }

// NewSeeder is a seeder whose records follow from seed.
func NewSeeder(seed uint64) *Seeder {
	return &Seeder{r: rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (g *Seeder) pick(s []string) string { return s[g.r.IntN(len(s))] }

// Text is prose of about n bytes: sentences of varied words, paragraphs.
func (g *Seeder) Text(n int) string {
	var b strings.Builder
	b.Grow(n + 200)
	for b.Len() < n {
		sentences := 3 + g.r.IntN(4)
		for s := 0; s < sentences && b.Len() < n; s++ {
			count := 8 + g.r.IntN(14)
			for w := 0; w < count; w++ {
				word := g.pick(words)
				if w == 0 {
					r, size := utf8.DecodeRuneInString(word)
					word = string(unicode.ToUpper(r)) + word[size:]
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(word)
			}
			b.WriteString(". ")
		}
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String())
}

// document is a document as a client creates it and later saves its
// generated result: ~60% Freestyle, the rest over the other templates,
// ~20% favorites.
func (g *Seeder) document() records.Values {
	template := int64(documents.FreestyleID)
	if g.r.IntN(100) >= 60 {
		template = 2 + g.r.Int64N(int64(len(documents.Templates)-2))
	}
	topic := g.pick(topics)
	name := fmt.Sprintf("%s: %s", documents.Templates[template], topic)
	if g.r.IntN(3) == 0 {
		name = fmt.Sprintf("%s %s v%d", strings.ToUpper(topic[:1])+topic[1:], strings.ToLower(documents.Templates[template]), 1+g.r.IntN(9))
	}
	result := g.Text(SeededResultBytes*9/10 + g.r.IntN(SeededResultBytes/5))
	return records.Values{
		"name":        name,
		"prompt":      fmt.Sprintf("Write a %s about %s for %s, in a %s tone. %s", strings.ToLower(documents.Templates[template]), topic, g.pick(audiences), g.pick(tones), g.Text(40+g.r.IntN(200))),
		"creativity":  []float64{0, 0.25, 0.5, 0.5, 0.75, 1}[g.r.IntN(6)],
		"template_id": template,
		"result":      result,
		"words":       int64(documents.Words(result)),
		"favorite":    g.r.IntN(5) == 0,
	}
}

// image is an image as a client creates it: every resolution, most with a
// style, some with a medium or filter, ~20% favorites.
func (g *Seeder) image() records.Values {
	name := strings.TrimSpace(fmt.Sprintf("%s %s %s", g.pick(moods), g.pick(subjects), g.pick(settings)))
	v := records.Values{
		"name":        name,
		"description": fmt.Sprintf("%s, %s", name, g.Text(60+g.r.IntN(240))),
		"resolution":  []string{"1024x1024", "1024x1024", "512x512", "512x512", "256x256"}[g.r.IntN(5)],
		"style":       nil,
		"medium":      nil,
		"filter":      nil,
		"favorite":    g.r.IntN(5) == 0,
	}
	if g.r.IntN(5) != 0 {
		v["style"] = g.pick(images.Styles)
	}
	if g.r.IntN(5) < 3 {
		v["medium"] = g.pick(images.Media)
	}
	if g.r.IntN(4) == 0 {
		v["filter"] = g.pick(images.Filters)
	}
	return v
}

// SeededAccount is what Seed wrote, for the figures to pick records from.
type SeededAccount struct {
	Name                      string
	Key                       string // read and write
	FirstDocument, FirstImage int64
	Docs, Imgs                []records.Values
	Took                      time.Duration
}

// Document returns the id of a seeded document matching ok, from the
// from-th on.
func (a *SeededAccount) Document(from int, ok func(records.Values) bool) int64 {
	for i := from; i < len(a.Docs); i++ {
		if ok(a.Docs[i]) {
			return a.FirstDocument + int64(i)
		}
	}
	panic("no seeded document fits")
}

// Seed writes the account's records into db's tables through
// store.Table.Import, which writes the very items Create does
// (BatchWriteItem, several in flight), and gives the account a key.
func Seed(ctx context.Context, db *dynamodb.Client, tables map[string]string, account string) (*SeededAccount, error) {
	start := time.Now()
	g := NewSeeder(1)
	a := &SeededAccount{Name: account}
	for range SeededDocuments {
		a.Docs = append(a.Docs, g.document())
	}
	for range SeededImages {
		a.Imgs = append(a.Imgs, g.image())
	}
	docTable := store.New(db, tables["DocumentsTable"], documents.Resource)
	docTable.Now = pastClock(SeededDocuments)
	imgTable := store.New(db, tables["ImagesTable"], images.Resource)
	imgTable.Now = pastClock(SeededImages)
	errs := make(chan error, 2)
	go func() {
		var err error
		a.FirstDocument, err = docTable.Import(ctx, account, a.Docs)
		errs <- err
	}()
	go func() {
		var err error
		a.FirstImage, err = imgTable.Import(ctx, account, a.Imgs)
		errs <- err
	}()
	for range 2 {
		if err := <-errs; err != nil {
			return nil, fmt.Errorf("bench: seed: %w", err)
		}
	}
	var err error
	a.Key, _, err = auth.NewKeys(db, tables["ApiKeysTable"], auth.PublicChecksum).Create(ctx, account, []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	a.Took = time.Since(start)
	return a, err
}

// pastClock dates n records over the past months, one every ten minutes or
// so, ending now.
func pastClock(n int) func() time.Time {
	clock := time.Now().UTC().Add(-time.Duration(n) * 10 * time.Minute)
	return func() time.Time {
		clock = clock.Add(time.Duration(5+rand.IntN(10)) * time.Minute)
		return clock
	}
}

package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/local/doccheck"
	"contentapi/shared/local/sam"
	"contentapi/shared/quota"
)

// docPages are the pages whose commands and code the tests hold: README.md
// first, then docs/*.md by name, so that moving text between them never
// drops a check.
func docPages(t *testing.T) []doccheck.Page {
	t.Helper()
	pages, err := doccheck.ReadPages(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 2 {
		t.Fatal("no pages under docs/")
	}
	return pages
}

// docPage is one page by its path from the repository's root.
func docPage(t *testing.T, path string) doccheck.Page {
	t.Helper()
	for _, p := range docPages(t) {
		if p.Path == path {
			return p
		}
	}
	t.Fatalf("no page %s", path)
	return doccheck.Page{}
}

// section is the page's text from the first from to the next to after it,
// or to the end when no to follows; a page without from fails the test.
func section(t *testing.T, p doccheck.Page, from, to string) string {
	t.Helper()
	start := strings.Index(p.Text, from)
	if start < 0 {
		t.Fatalf("%s has no %q", p.Path, from)
	}
	end := strings.Index(p.Text[start+len(from):], to)
	if end < 0 {
		return p.Text[start:]
	}
	return p.Text[start : start+len(from)+end]
}

// The curl examples of every page are run as printed, in order (README.md
// first), against a fresh stack: each must succeed.
func TestDocsExamples(t *testing.T) {
	commands := doccheck.Commands(docPages(t), "curl")
	if len(commands) < 10 {
		t.Fatalf("found %d curl examples in the pages, want one per operation", len(commands))
	}
	// As deployed by default: generating, so the regenerate examples work,
	// with webhooks, whose examples' receiver resolves to a public address.
	s := newGenStack(t, genOptions{noStream: true, configure: func(cfg *app.Config) { withWebhooks(t)(cfg) }}).stack
	vars := map[string]string{"API": s.url + "/api/v1", "KEY": s.writeKey}
	for _, line := range commands {
		rq, err := parseCurl(line, vars)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		r := s.do(rq)
		if r.Status != 200 && r.Status != 201 && r.Status != 202 {
			t.Fatalf("example failed with %d: %s\n%s", r.Status, line, r.Raw)
		}
	}
}

// Every relative link of the pages (and of BENCHMARKS.md) leads to a file
// of the repository and, when it names a section, to a heading of that
// page, so that text moved between pages leaves no link behind.
func TestDocsLinksResolve(t *testing.T) {
	pages := docPages(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, doccheck.Page{Path: "BENCHMARKS.md", Text: string(raw)})
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, p := range pages {
		for _, m := range link.FindAllStringSubmatch(p.Text, -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file := p.Path
			if target != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(p.Path), target))
			}
			checked++
			full := filepath.Join("..", "..", "..", filepath.FromSlash(file))
			text, err := os.ReadFile(full)
			if err != nil {
				if st, statErr := os.Stat(full); statErr == nil && st.IsDir() && anchor == "" {
					continue
				}
				t.Errorf("%s links %s, which is not in the repository", p.Path, m[1])
				continue
			}
			if anchor != "" && !slices.Contains(anchors(string(text)), anchor) {
				t.Errorf("%s links %s, and %s has no such section", p.Path, m[1], file)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d links checked: the pattern no longer finds them", checked)
	}
}

// parseCurl reads the curl options the examples use: -s, -X, -H, -d.
func parseCurl(line string, vars map[string]string) (request, error) {
	words, err := shellWords(line, vars)
	if err != nil {
		return request{}, err
	}
	rq := request{header: map[string]string{}}
	var data []string
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s":
		case "-X", "-H", "-d":
			if i+1 >= len(words) {
				return request{}, fmt.Errorf("%s without a value", w)
			}
			i++
			switch w {
			case "-X":
				rq.method = words[i]
			case "-H":
				k, v, _ := strings.Cut(words[i], ":")
				rq.header[strings.TrimSpace(k)] = strings.TrimSpace(v)
			case "-d":
				data = append(data, words[i])
			}
		default:
			if strings.HasPrefix(w, "-") {
				return request{}, fmt.Errorf("option %s is not understood by this test", w)
			}
			rq.path = w
		}
	}
	if rq.method == "" {
		rq.method = "GET"
		if len(data) > 0 {
			rq.method = "POST"
		}
	}
	if len(data) > 0 {
		rq.body = strings.Join(data, "&")
		rq.contentType = "application/x-www-form-urlencoded" // what curl -d sends
	}
	if ct, ok := rq.header["Content-Type"]; ok {
		rq.contentType = ct
		delete(rq.header, "Content-Type")
	}
	if auth, ok := rq.header["Authorization"]; ok {
		rq.key = strings.TrimPrefix(auth, "Bearer ")
		delete(rq.header, "Authorization")
	}
	base := vars["API"][:strings.Index(vars["API"], "/api/v1")]
	rq.path = strings.TrimPrefix(rq.path, base)
	return rq, nil
}

// shellWords splits like sh: single quotes literal, double quotes and bare
// words expand $NAME.
func shellWords(line string, vars map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unclosed \"")
			}
			cur.WriteString(expand(line[i+1:i+1+end], vars))
			i += end + 1
			inWord = true
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\'' && line[j] != '"' {
				j++
			}
			cur.WriteString(expand(line[i:j], vars))
			i = j - 1
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func expand(s string, vars map[string]string) string {
	return os.Expand(s, func(name string) string { return vars[name] })
}

// The deploy commands are run by people, not by this suite, so they are
// held to the files they rely on: the region and stack in samconfig.toml,
// the template's outputs and parameters, and the order of the commands.
// docs/deploying.md has the whole of it, README.md's Deploying its short
// form, and every page's commands name the same region and stack.
func TestDocsDeploySection(t *testing.T) {
	deploying := docPage(t, "docs/deploying.md").Text
	short := section(t, docPage(t, "README.md"), "## Deploying", "\n## ")
	conf := samconfig(t)
	region, stack := conf["default.global.parameters"]["region"], conf["default.global.parameters"]["stack_name"]
	if region == "" || stack == "" {
		t.Fatalf("samconfig.toml sets region %q, stack_name %q; plain sam deploy needs both", region, stack)
	}
	build := conf["default.build.parameters"]
	if build["build_in_source"] != "true" || build["cached"] == "true" {
		t.Errorf("samconfig.toml build parameters %v: want build_in_source and no cache hashing the whole tree", build)
	}
	if deploy := conf["default.deploy.parameters"]; deploy["capabilities"] != "CAPABILITY_IAM" || deploy["resolve_s3"] != "true" {
		t.Errorf("samconfig.toml deploy parameters %v", deploy)
	}
	// The template's loops: SAM CLI expands them for sam build and sam
	// local only when samconfig.toml says so, for every command.
	tmpl := loadTemplate(t)
	if slices.Contains(tmpl.Transforms, sam.LanguageExtensions) {
		if v := conf["default.global.parameters"]["language_extensions"]; v != "true" {
			t.Errorf("samconfig.toml: language_extensions = %q in the global parameters; sam build would meet the template's Fn::ForEach unexpanded", v)
		}
		if !strings.Contains(deploying, "1.161.0 or newer") {
			t.Error("docs/deploying.md does not ask for SAM CLI 1.161.0 or newer, the first to take language_extensions")
		}
	}
	// make deploy run again without a change must not fail.
	if v := conf["default.deploy.parameters"]["fail_on_empty_changeset"]; v != "false" {
		t.Errorf("samconfig.toml: fail_on_empty_changeset = %q; an unchanged deploy would exit non-zero", v)
	}
	if !strings.Contains(deploying, "**"+region+"**") {
		t.Errorf("docs/deploying.md does not name the region %s", region)
	}
	var commands []string
	for _, p := range docPages(t) {
		for _, m := range regexp.MustCompile(`--region (\S+)`).FindAllStringSubmatch(p.Text, -1) {
			if m[1] != region && !strings.HasPrefix(m[1], "$") {
				t.Errorf("%s: a command uses --region %s, samconfig.toml deploys to %s", p.Path, m[1], region)
			}
		}
		for _, m := range regexp.MustCompile(`--stack-name (\S+)`).FindAllStringSubmatch(p.Text, -1) {
			if m[1] != stack && !strings.HasPrefix(m[1], "$") {
				t.Errorf("%s: a command names stack %s, samconfig.toml deploys %s", p.Path, m[1], stack)
			}
		}
		for _, m := range regexp.MustCompile(`\$\(output (\w+)\)`).FindAllStringSubmatch(p.Text, -1) {
			if _, ok := tmpl.Outputs[m[1]]; !ok {
				t.Errorf("%s reads output %s, which the template does not have", p.Path, m[1])
			}
		}
		commands = append(commands, shellLines(p.Text)...)
	}
	for name := range tmpl.Parameters {
		if !strings.Contains(deploying, "`"+name+"`") {
			t.Errorf("template parameter %s is not described in docs/deploying.md", name)
		}
	}
	for _, line := range commands {
		if strings.Contains(line, "sam deploy --guided") {
			t.Errorf("%q: guided deploys ask, per function, about having no authorizer, and the default aborts", line)
		}
		if strings.Contains(line, "sam local invoke") && !strings.HasPrefix(line, "sam build && ") {
			t.Errorf("%q: sam local invoke runs what sam build built, so build first", line)
		}
	}
	linux := strings.Join(shellLines(deploying), "\n")
	if !strings.Contains(linux, "DYNAMODB_EXTRA_LISTEN=") || !strings.Contains(linux, "--add-host host.docker.internal:host-gateway") {
		t.Error("the Linux way to reach DynamoDB Local from sam local invoke is missing")
	}
	for _, want := range []string{"sam build", "sam deploy", "make preflight"} {
		if !strings.Contains(strings.Join(shellLines(short), "\n"), want) {
			t.Errorf("README.md's Deploying does not run %s", want)
		}
	}
}

// shellLines returns the lines of the sh blocks in md.
func shellLines(md string) []string {
	var out []string
	inBlock := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// samconfig reads samconfig.toml's plain key = value settings by section.
func samconfig(t *testing.T) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := map[string]map[string]string{}
	section := ""
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			conf[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("samconfig.toml: cannot read %q", line)
			}
			if section != "" {
				conf[section][strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	return conf
}

// The model access docs/generation.md describes is today's: no console
// page to tick models on, but a subscription on the first call that needs
// the Marketplace actions the template grants, a payment method and up to
// 15 minutes, and what an AccessDeniedException means.
func TestDocsModelAccess(t *testing.T) {
	section := section(t, docPage(t, "docs/generation.md"), "## Model access", "\n## ")
	tmpl := loadTemplate(t)
	want := []string{"`" + fmt.Sprint(tmpl.Parameters["MarketplaceProductIds"].Default) + "`", "`MarketplaceProductIds`",
		"15 minutes", "payment method", "`AccessDeniedException`", "`model_unavailable`"}
	for _, line := range subscription() {
		action, _, _ := strings.Cut(line, " ")
		want = append(want, "`"+action+"`")
	}
	for _, w := range want {
		if !strings.Contains(section, w) {
			t.Errorf("the Model access section does not say %s", w)
		}
	}
	for _, p := range docPages(t) {
		for _, retired := range []string{"Modify model access", "Model access* (under", "Enabling model access"} {
			if strings.Contains(p.Text, retired) {
				t.Errorf("%s still sends users to the retired model-access page: %q", p.Path, retired)
			}
		}
	}
}

// kindVariable reports whether name is a quota kind's variable, which
// make limits passes to apikey in the environment (--from-env).
func kindVariable(name string) bool {
	return slices.ContainsFunc(app.Kinds, func(k quota.Kind) bool { return strings.ToUpper(quota.LimitName(k)) == name })
}

// Every make command of the pages names a target of the Makefile, and
// every variable it sets is one the Makefile or the local stack reads.
func TestDocsMakeTargets(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(raw)
	found := 0
	for _, p := range docPages(t) {
		for _, line := range shellLines(p.Text) {
			words := strings.Fields(strings.Split(line, "#")[0])
			for len(words) > 0 && strings.Contains(words[0], "=") {
				words = words[1:] // VAR=value make ...
			}
			if len(words) < 2 || words[0] != "make" {
				continue
			}
			found++
			target := ""
			for _, w := range words[1:] {
				name, _, isVar := strings.Cut(w, "=")
				switch {
				case isVar && !strings.Contains(makefile, "$("+name+")") && !(target == "limits" && kindVariable(name)):
					t.Errorf("%s: %q sets %s, which the Makefile does not read", p.Path, line, name)
				case !isVar && !strings.HasPrefix(w, "-") && target == "":
					target = w
				}
			}
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).MatchString(makefile) {
				t.Errorf("%s: %q runs target %q, which the Makefile does not have", p.Path, line, target)
			}
		}
	}
	if found < 10 {
		t.Fatalf("found %d make commands in the pages: the pattern no longer finds them", found)
	}
}

// Every Markdown file a comment, a page, the template or the Makefile names
// is in the repository: no text sends a reader to a document it does not
// hold (a contract or design notes kept elsewhere). A name is looked up
// from the root and from the naming file's folder; a pattern (docs/*.md)
// names none.
func TestDocsCitedExist(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	token := regexp.MustCompile(`[\w./-]+`)
	cited := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "build" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".tmpl", ".toml":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, name := range token.FindAllString(string(raw), -1) {
			name = strings.TrimRight(name, ".")
			if !strings.HasSuffix(name, ".md") || filepath.Base(name) == ".md" || strings.Contains(name, "//") {
				continue
			}
			cited++
			if _, err := os.Stat(filepath.Join(root, name)); err == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), name)); err == nil {
				continue
			}
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s names %s, which is not in the repository", rel, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 50 {
		t.Fatalf("only %d names of Markdown files found: the walk no longer reads the tree", cited)
	}
}

// docs/architecture.md is read by a maintainer new to the code, in one
// sitting: its sentences average at most 25 words and none runs past 40
// (issue 40 found an average of 36.6, with 17 sentences over 60 words).
func TestArchitectureReadsInShortSentences(t *testing.T) {
	sentences := doccheck.Sentences(docPage(t, "docs/architecture.md").Text)
	if len(sentences) < 100 {
		t.Fatalf("only %d sentences in docs/architecture.md: the split no longer reads the page", len(sentences))
	}
	words := 0
	for _, s := range sentences {
		n := len(strings.Fields(s))
		words += n
		if n > 40 {
			t.Errorf("a sentence of %d words: %.80s...", n, s)
		}
	}
	avg := float64(words) / float64(len(sentences))
	t.Logf("%d sentences, %.1f words a sentence on average", len(sentences), avg)
	if avg > 25 {
		t.Errorf("docs/architecture.md: %.1f words a sentence on average, over 25", avg)
	}
}

// The commands docs/architecture.md gives are the project's own (make, the
// go tool, a command under cmd/): a reader has what runs them.
func TestArchitectureNamesOnlyOurCommands(t *testing.T) {
	ours := []string{"make", "go"}
	dirs, err := os.ReadDir(filepath.Join("..", "..", "..", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		ours = append(ours, d.Name())
	}
	command := regexp.MustCompile(`^([a-z][a-z-]*) [^ ]`)
	found := 0
	for _, code := range doccheck.InlineCode(docPage(t, "docs/architecture.md").Text) {
		m := command.FindStringSubmatch(code)
		if m == nil {
			continue
		}
		found++
		if !slices.Contains(ours, m[1]) {
			t.Errorf("docs/architecture.md runs %q, a tool the repository does not hold", code)
		}
	}
	if found < 5 {
		t.Fatalf("only %d commands found in docs/architecture.md: the pattern no longer finds them", found)
	}
}

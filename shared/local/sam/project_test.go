package sam

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFindWalksUp(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, FileName), []byte("Resources: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	got, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	// TempDir may sit behind a symlink; compare what the paths point at.
	if a, b := mustStat(t, got), mustStat(t, filepath.Join(root, FileName)); !os.SameFile(a, b) {
		t.Errorf("Find = %s, want %s", got, filepath.Join(root, FileName))
	}
}

func TestFindReportsMissingTemplate(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "no template.yaml") {
		t.Fatalf("Find error = %v", err)
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// loadProject loads the repository's own template.yaml.
func loadProject(t *testing.T) *Template {
	t.Helper()
	p, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// The tests below pin the project template to the facts the code and the
// team rely on; a change to template.yaml that breaks one is a change of
// contract, not of configuration.

func TestProjectHTTPAPI(t *testing.T) {
	tmpl := loadProject(t)
	apis := tmpl.ResourcesOfType("AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("HTTP APIs = %v, want one", apis)
	}
	// A named stage would put its name in rawPath and break every route.
	if stage := tmpl.Resources[apis[0]].Properties["StageName"]; stage != "$default" {
		t.Errorf("StageName = %v", stage)
	}
	for _, f := range tmpl.Functions() {
		events, _ := f.Properties["Events"].(map[string]any)
		for name, ev := range events {
			if api := lookup(ev.(map[string]any), "Properties", "ApiId"); !reflect.DeepEqual(api, map[string]any{"Ref": apis[0]}) {
				t.Errorf("%s.%s ApiId = %v: without it SAM makes a second, implicit API", f.LogicalID, name, api)
			}
		}
	}
}

package repocheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportGroups checks every Go file of the repository (its nested
// modules included): an import block keeps the standard library in a
// group of its own, apart from module imports, as gofmt cannot. A group
// is a run of imports without a blank line between them.
func TestImportGroups(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root %s has no go.mod: %v", root, err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		for _, msg := range mixedGroups(t, path) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: %s", rel, msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under %s: not the repository", files, root)
	}
}

// mixedGroups returns a message for each import group of the file at path
// that holds both standard-library and other imports.
func mixedGroups(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return nil
	}
	var msgs []string
	var std, other []string
	lastLine := -1
	flush := func() {
		if len(std) > 0 && len(other) > 0 {
			msgs = append(msgs, "one import group mixes the standard library ("+strings.Join(std, ", ")+
				") with module imports ("+strings.Join(other, ", ")+"): put a blank line between them")
		}
		std, other = nil, nil
	}
	for _, spec := range f.Imports {
		line := fset.Position(spec.Pos()).Line
		if lastLine >= 0 && line > lastLine+1 {
			flush()
		}
		lastLine = fset.Position(spec.End()).Line
		p, _ := strconv.Unquote(spec.Path.Value)
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			other = append(other, p)
		} else {
			std = append(std, p)
		}
	}
	flush()
	return msgs
}

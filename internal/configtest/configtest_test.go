package configtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heureka-project/heureka"
)

type config struct{ A, B int }

func (c config) Validate() error {
	switch {
	case c.A < 1:
		return heureka.InvalidConfig("A", c.A, "want at least 1")
	case c.B < 0:
		return errors.New("B is negative") // not a *heureka.ConfigError
	}
	return nil
}

// recorder is a testing.TB that keeps what it is told.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = true }

func TestRefuses(t *testing.T) {
	var r recorder
	Refuses(&r, config{A: 1}, Cases[config]{
		"A":            func(c *config) { c.A = 0 },  // refused by its field: passes
		"B plain":      func(c *config) { c.B = -1 }, // a plain error: fails
		"B other":      func(c *config) { c.A = 0 },  // refused by another field: fails
		"A not at all": func(c *config) { c.B = 5 },  // not refused: fails
	})
	if r.fatal || len(r.errs) != 3 {
		t.Errorf("fatal %v, errors %q; want the last three cases, each once", r.fatal, r.errs)
	}

	r = recorder{}
	Refuses(&r, config{}, nil)
	if !r.fatal {
		t.Error("a good config that does not validate passed")
	}
}

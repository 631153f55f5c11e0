package heureka

import (
	"errors"
	"fmt"
	"testing"
)

func TestHTTPStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{Errorf(EINVALID, "x"), 400},
		{Errorf(ENOTFOUND, "x"), 404},
		{fmt.Errorf("wrapped: %w", Errorf(ECONFLICT, "x")), 409},
		{Errorf(ETOOLARGE, "x"), 413},
		{Errorf(EUNAVAILABLE, "x"), 503},
		{errors.New("plain"), 500},
	} {
		if got := HTTPStatus(c.err); got != c.want {
			t.Errorf("HTTPStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

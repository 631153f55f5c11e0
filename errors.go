package heureka

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Error codes. Transports map them to their own answers in one place
// (internal/httpapi): ENOTFOUND → 404, ECONFLICT → 409, EINVALID → 400,
// ETOOLARGE → 413, EUNAVAILABLE → 503.
const (
	EINVALID     = "invalid"
	ENOTFOUND    = "not_found"
	ECONFLICT    = "conflict"
	ETOOLARGE    = "too_large"
	EUNAVAILABLE = "unavailable"
	EINTERNAL    = "internal"
)

// Error is an error with a code from the list above and a message a person
// can act on.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

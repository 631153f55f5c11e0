package heureka

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Error codes. HTTPStatus maps them to HTTP statuses, for every answer
// that carries one (internal/httpapi's responses, replication's per-item
// results): ENOTFOUND → 404, ECONFLICT → 409, EINVALID → 400,
// ETOOLARGE → 413, EUNAVAILABLE → 503, anything else → 500.
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

// ErrorCode returns the code of the first *Error in err's chain, EINVALID
// for a *ConfigError, EINTERNAL for any other error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	// AsType, not As: no reflection, on every error answer.
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	if _, ok := errors.AsType[*ConfigError](err); ok {
		return EINVALID
	}
	return EINTERNAL
}

// HTTPStatus is the HTTP status that answers err, by its code (see
// ErrorCode); 500 for an error without one.
func HTTPStatus(err error) int {
	switch ErrorCode(err) {
	case EINVALID:
		return 400
	case ENOTFOUND:
		return 404
	case ECONFLICT:
		return 409
	case ETOOLARGE:
		return 413
	case EUNAVAILABLE:
		return 503
	}
	return 500
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

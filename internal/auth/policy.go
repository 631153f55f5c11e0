package auth

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kind tells the two ways a request is refused apart.
type Kind int

const (
	// Unauthenticated: credentials are missing or wrong (HTTP 401).
	Unauthenticated Kind = iota + 1
	// Forbidden: the caller is known but may not do this (HTTP 403).
	Forbidden
)

// Error is a refusal with a message that says what is missing.
type Error struct {
	Kind    Kind
	Message string
	// InvalidToken is set when a bearer token was presented and refused,
	// for the error="invalid_token" of RFC 6750's challenge.
	InvalidToken bool
}

func (e *Error) Error() string { return e.Message }

func unauthenticated(format string, args ...any) *Error {
	return &Error{Kind: Unauthenticated, Message: fmt.Sprintf(format, args...)}
}

// Principal is an authenticated caller.
type Principal struct {
	// Name is the user's name in the credentials file.
	Name string
	// Method is how it authenticated: "basic", "bearer" or "certificate".
	Method string

	roles     []Role
	apps      []*regexp.Regexp
	instances []*regexp.Regexp
	appSrc    []string
}

// Has reports whether p holds role r.
func (p *Principal) Has(r Role) bool { return p != nil && slices.Contains(p.roles, r) }

// Roles returns p's roles.
func (p *Principal) Roles() []Role { return slices.Clone(p.roles) }

// owns reports whether p's agent role covers instance id of app. An empty
// id (a registration, whose ID is in the body) is covered when the app is.
func (p *Principal) owns(app, id string) bool {
	if !p.Has(RoleAgent) || !anyMatch(p.apps, app) {
		return false
	}
	return len(p.instances) == 0 || id == "" || anyMatch(p.instances, id)
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// describe is p for messages: name, roles and an agent's scope.
func (p *Principal) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "user %q (", p.Name)
	for i, r := range p.roles {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(r))
		if r == RoleAgent {
			fmt.Fprintf(&b, " for %s", strings.Join(p.appSrc, " | "))
		}
	}
	b.WriteString(")")
	return b.String()
}

// Action is the kind of thing a request does.
type Action int

const (
	// Read reads registry contents.
	Read Action = iota + 1
	// Write changes one instance of one application: register, renew,
	// cancel, status, metadata.
	Write
	// Replicate is a peer's call: batches, replication reads, and single
	// writes marked as replicated.
	Replicate
	// Operate is anything else that changes state; only operators may.
	Operate
)

// Request is what a caller asks to do, for Authorize.
type Request struct {
	Action Action
	// Verb describes the request in messages and audit lines, e.g.
	// "cancel", "set the status of".
	Verb string
	// App and ID name the instance a Write touches (ID is empty for a
	// registration).
	App, ID string
}

func (r Request) target() string {
	switch {
	case r.App != "" && r.ID != "":
		return r.App + "/" + r.ID
	case r.App != "":
		return "application " + r.App
	}
	return ""
}

// Decision is a granted request.
type Decision struct {
	// Audit is set for operator actions: writes allowed by the operator
	// role rather than by an agent's own scope.
	Audit bool
}

// authorize decides whether p (nil when no credentials came) may do req
// when reads are as given.
func authorize(reads Reads, p *Principal, req Request) (Decision, error) {
	if p == nil {
		if req.Action == Read && reads == ReadsOpen {
			return Decision{}, nil
		}
		return Decision{}, unauthenticated("to %s, send credentials: HTTP basic auth (user:password in the registry URL) or an Authorization: Bearer token", what(req))
	}
	switch req.Action {
	case Read:
		return Decision{}, nil
	case Replicate:
		if p.Has(RolePeer) {
			return Decision{}, nil
		}
		return Decision{}, &Error{Kind: Forbidden, Message: fmt.Sprintf("%s may not %s: that needs the peer role", p.describe(), what(req))}
	case Write:
		if p.owns(req.App, req.ID) {
			return Decision{}, nil
		}
		if p.Has(RoleOperator) {
			return Decision{Audit: true}, nil
		}
		msg := fmt.Sprintf("%s may not %s: that needs the operator role, or the agent role with apps matching %s", p.describe(), what(req), req.App)
		if p.Has(RoleAgent) && anyMatch(p.apps, req.App) {
			msg = fmt.Sprintf("%s may not %s: that needs the operator role, or the agent role with instances matching %s", p.describe(), what(req), req.ID)
		}
		return Decision{}, &Error{Kind: Forbidden, Message: msg}
	default:
		if p.Has(RoleOperator) {
			return Decision{Audit: true}, nil
		}
		return Decision{}, &Error{Kind: Forbidden, Message: fmt.Sprintf("%s may not %s: that needs the operator role", p.describe(), what(req))}
	}
}

func what(req Request) string {
	verb := req.Verb
	if verb == "" {
		verb = map[Action]string{Read: "read the registry", Write: "write", Replicate: "replicate", Operate: "do this"}[req.Action]
	}
	if t := req.target(); t != "" {
		return verb + " " + t
	}
	return verb
}

package auth

import "sync/atomic"

// CountBcrypt makes s count its bcrypt comparisons and returns the count.
// Call it before s is used.
func CountBcrypt(s *Store) *atomic.Int64 {
	n := new(atomic.Int64)
	next := s.compare
	s.compare = func(hash, password []byte) error {
		n.Add(1)
		return next(hash, password)
	}
	return n
}

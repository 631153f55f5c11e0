package proctest

import (
	"bytes"
	"sync"
)

// Buffer collects output, a log for instance, that the code under test
// goes on writing while the test reads it: Write and String are safe to
// call from different goroutines. The zero value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Package hugepage backs the large buffers of a big memory (the file read
// whole, its parsed entries, the search's inputs) with transparent huge
// pages where the system offers them on request.
//
// Reading a 10 MB memory touches thousands of fresh 4 KiB pages, and every
// first touch is a page fault; on virtual machines a fault costs several
// microseconds, which adds up to a large part of a search. Linux's default
// transparent huge page mode on many distributions ("madvise") gives 2 MiB
// pages only to memory that asks for them with madvise(MADV_HUGEPAGE), so the
// buffers here ask. The advice is a hint: where it is refused or
// unsupported, nothing changes but speed.
package hugepage

import (
	"io"
	"os"
	"unsafe"
)

// MinSize is the smallest buffer worth advising: below a few huge pages,
// the alignment leaves nothing to gain.
const MinSize = 4 << 20

// Make is make([]T, n), advised for huge pages when it is large.
func Make[T any](n int) []T {
	s := make([]T, n)
	if size := uintptr(n) * unsafe.Sizeof(*new(T)); n > 0 && size >= MinSize {
		advise(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), size))
	}
	return s
}

// ReadFile is os.ReadFile into a buffer advised for huge pages when the file
// is large.
func ReadFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() < int64(maxInt) {
		size += int(fi.Size()) // and some room, as os.ReadFile, for a file that grows
	}
	var data []byte
	if size >= MinSize {
		data = Make[byte](size)[:0]
	} else {
		data = make([]byte, 0, size)
	}
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return data, err
		}
		if len(data) >= cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

const maxInt = int(^uint(0) >> 1)

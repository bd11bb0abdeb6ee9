package memfile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotFound and ErrAmbiguous are returned by Find.
var (
	ErrNotFound  = errors.New("no such entry")
	ErrAmbiguous = errors.New("ambiguous entry reference")
)

// MinPrefix is the shortest ID prefix Find accepts.
const MinPrefix = 4

// Find returns the index of the entry a reference names: a full ID, the
// number N that list prints (the N-th entry, 1-based), or a unique ID prefix
// of at least MinPrefix characters.
func (f *File) Find(ref string) (int, error) {
	ref = strings.TrimSpace(ref)
	for i := range f.Entries {
		if f.Entries[i].ID == ref {
			return i, nil
		}
	}
	if n, err := strconv.Atoi(ref); err == nil {
		if n >= 1 && n <= len(f.Entries) {
			return n - 1, nil
		}
		return -1, fmt.Errorf("%w: %d (there are %d entries)", ErrNotFound, n, len(f.Entries))
	}
	if len(ref) < MinPrefix {
		return -1, fmt.Errorf("%w: %q (an ID prefix needs at least %d characters)", ErrNotFound, ref, MinPrefix)
	}
	found := -1
	var ids []string
	for i := range f.Entries {
		if strings.HasPrefix(f.Entries[i].ID, ref) {
			found = i
			ids = append(ids, f.Entries[i].ID)
		}
	}
	switch len(ids) {
	case 0:
		return -1, fmt.Errorf("%w: %q", ErrNotFound, ref)
	case 1:
		return found, nil
	}
	return -1, fmt.Errorf("%w: %q matches %s", ErrAmbiguous, ref, strings.Join(ids, ", "))
}

// FindAll resolves several references; it fails, naming the first bad one,
// before anything is changed. Duplicates are returned once.
func (f *File) FindAll(refs []string) ([]int, error) {
	var idx []int
	seen := map[int]bool{}
	for _, r := range refs {
		i, err := f.Find(r)
		if err != nil {
			return nil, err
		}
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	return idx, nil
}

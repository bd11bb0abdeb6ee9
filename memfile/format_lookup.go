package memfile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ErrNotFound and ErrAmbiguous are returned by Find.
var (
	ErrNotFound  = errors.New("no such entry")
	ErrAmbiguous = errors.New("ambiguous entry reference")
)

// MinPrefix is the shortest ID prefix Find accepts.
const MinPrefix = 4

// KeyField is the bullet that names an entry by a key of its writer's
// choosing ("- Key: api-auth"): what the MCP tools' key argument writes.
const KeyField = "Key"

// AliasField is the bullet that names another ID of an entry: the ID the
// same fact had in another clone, which a merge kept once ("- Alias: …";
// the tag "alias:…" in ralph's dialect). Find resolves it.
const AliasField = "Alias"

// Find returns the index of the entry a reference names. It is the one
// resolver of every command and MCP tool, and tries, in this order:
//
//  1. a full ID (an ID stored in the file is never read as anything else);
//  2. a number N, as list prints it: the N-th entry, 1-based (a number out
//     of range is not found, never taken as a key or an ID prefix);
//  3. a key (a KeyField bullet); a key two entries share is ambiguous;
//     then an ID the entry had before it went into a ralph file (SourceIDField),
//     then another ID of the same fact (AliasField);
//  4. a unique ID prefix of at least MinPrefix characters.
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
	if i, err := f.findField(KeyField, ref); i >= 0 || err != nil {
		return i, err
	}
	if i, err := f.findField(SourceIDField, ref); i >= 0 || err != nil {
		return i, err
	}
	if i, err := f.findField(AliasField, ref); i >= 0 || err != nil {
		return i, err
	}
	if len(ref) < MinPrefix {
		return -1, fmt.Errorf("%w: %q (no entry has this key, and an ID prefix needs at least %d characters)", ErrNotFound, ref, MinPrefix)
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

// findField is the entry whose field key is ref: -1 when none has it, an
// error when several have.
func (f *File) findField(key, ref string) (int, error) {
	found := -1
	var ids []string
	for i := range f.Entries {
		for _, fl := range f.Entries[i].Extra {
			if fl.Key == key && strings.TrimSpace(fl.Value) == ref {
				found = i
				ids = append(ids, f.Entries[i].ID)
				break
			}
		}
	}
	if len(ids) > 1 {
		return -1, fmt.Errorf("%w: %q is the %s of %s", ErrAmbiguous, ref, strings.ToLower(key), strings.Join(ids, ", "))
	}
	return found, nil
}

// CheckKey refuses a key Find could not give back: one that is empty, not
// one line of printable text, or a number (numbers name list positions).
func CheckKey(key string) error {
	switch {
	case strings.TrimSpace(key) == "":
		return fmt.Errorf("%w: the key is empty", ErrInvalid)
	case strings.ContainsAny(key, "\n\r"):
		return fmt.Errorf("%w: the key must be one line", ErrInvalid)
	case strings.IndexFunc(key, LineControl) >= 0:
		return fmt.Errorf("%w: the key has a control character: %q", ErrInvalid, key)
	}
	if _, err := strconv.Atoi(strings.TrimSpace(key)); err == nil {
		return fmt.Errorf("%w: a key cannot be a number (%s): numbers name entries by their place in the list", ErrInvalid, key)
	}
	return nil
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

// LineControl tells a character a one-line value (a key, an agent's ID)
// may not hold: a control character, a tab too, or one a terminal or a
// viewer acts on (Control: a bidi control, a line separator).
func LineControl(r rune) bool { return unicode.IsControl(r) || Control(r) }

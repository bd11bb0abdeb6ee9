package history

import (
	"errors"
	"fmt"

	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

// Secrets never leave through history: a snapshot scans the entries it adds
// or changes (memfile.CheckSecrets: an entry's Secret-Allowed bullet lets
// in what the rules it names find), so one written into the file by hand
// (an editor, sed, another tool) is never committed, and so never pushed;
// a merge scans what the other side brings the same way, so a remote's
// snapshot holding a secret is not merged, nor pushed on.

// SecretError is a snapshot or a merge refused because an entry it would
// carry holds a secret. It is a memfile.ErrSecret. Its message names the
// entry, the rule and the position, never the secret (nor the title, which
// may hold it).
type SecretError struct {
	ID       string               // the entry
	File     string               // MemoryName or ArchiveName
	Snapshot string               // the snapshot that brought it (a merge); "" for the live memory
	Source   string               // who made that snapshot ("origin"); "" for the live memory
	Err      *memfile.SecretError // what the rules found
	More     int                  // further entries that hold secrets
}

func (e *SecretError) Error() string {
	msg := fmt.Sprintf("entry %s of %s", e.ID, e.File)
	if e.Snapshot != "" {
		msg = fmt.Sprintf("%s snapshot %s brings entry %s (%s), which", e.Source, words.Short(e.Snapshot), e.ID, e.File)
	}
	f := e.Err.Findings[0]
	msg += fmt.Sprintf(" holds a secret: %s at %s line %d, column %d (%s)", f.Rule, f.Field, f.Line, f.Column, f.Excerpt)
	if e.More > 0 {
		msg += fmt.Sprintf("; and %d more entr%s", e.More, words.Plural(e.More, "y", "ies"))
	}
	return msg
}

// Unwrap makes errors.Is(err, memfile.ErrSecret) true.
func (e *SecretError) Unwrap() error { return e.Err }

// scanChanges returns a *SecretError for the first entry that changes add
// or change and that holds a secret no Secret-Allowed rule lets in, nil
// when there is none. file names the file in the error.
func scanChanges(file string, changes []Change) *SecretError {
	var found *SecretError
	for _, ch := range changes {
		if ch.After == nil {
			continue
		}
		var se *memfile.SecretError
		if !errors.As(memfile.CheckSecrets(ch.After), &se) {
			continue
		}
		if found != nil {
			found.More++
			continue
		}
		found = &SecretError{ID: ch.ID, File: file, Err: se}
	}
	return found
}

// scanEntries is scanChanges of every entry of data, for a snapshot whose
// parent's file could not be read.
func scanEntries(file string, data []byte) *SecretError {
	return scanChanges(file, Compare(&memfile.File{}, memfile.Parse(data)))
}

// scanTaken scans what a snapshot of files adds to its parent's: the
// active file's changes (rec, when ok; else every entry) and, when the
// archive changed (before.Archive is the parent's, read by the caller), the
// archive's (every entry of it when archOK is false: the parent's could not
// be read). Only changed entries are scanned, so a snapshot costs what
// changed.
func scanTaken(files, before Files, rec record, ok, archChanged, archOK bool) error {
	var errs []*SecretError
	if ok {
		errs = append(errs, scanChanges(MemoryName, rec.changes))
	} else {
		errs = append(errs, scanEntries(MemoryName, files.Memory))
	}
	switch {
	case archChanged && !archOK:
		errs = append(errs, scanEntries(ArchiveName, files.Archive))
	case archChanged:
		errs = append(errs, scanChanges(ArchiveName, Compare(memfile.Parse(before.Archive), memfile.Parse(files.Archive))))
	}
	return joinSecrets(errs...)
}

// joinSecrets is the first of errs that is not nil, counting the entries
// of the others in its More; nil when all are nil.
func joinSecrets(errs ...*SecretError) error {
	var first *SecretError
	for _, e := range errs {
		switch {
		case e == nil:
		case first == nil:
			first = e
		default:
			first.More += 1 + e.More
		}
	}
	if first == nil {
		return nil
	}
	return first
}

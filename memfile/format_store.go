package memfile

import (
	"errors"
	"time"
)

// The pieces of the format the store (internal/store) needs to read and
// write a memory file. They are thin names for the format's own helpers.

// ErrInvalid is returned for an entry the format cannot hold.
var ErrInvalid = errors.New("invalid entry")

// SniffBytes is how much of the head of a file tells its dialect.
const SniffBytes = 4096

// StrayKey is the key of a line inside an entry that is no bullet.
const StrayKey = strayKey

// ConflictMarked reports whether ps holds a conflict-marker problem.
func ConflictMarked(ps []Problem) bool { return conflictMarked(ps) }

// EncodeID encodes b as an entry ID.
func EncodeID(b []byte) string { return encodeID(b) }

// LineEnds returns s with Unix line ends, and whether it had CRLF ones.
func LineEnds(s string) (_ string, crlf bool) { return lineEnds(s) }

// ParseOwned parses data that the caller hands over: the entries' strings
// share its memory.
func ParseOwned(data []byte) *File { return parseOwned(data) }

// SniffDialect tells the dialect of a file from its first bytes.
func SniffDialect(head []byte) Dialect { return sniffDialect(head) }

// ValidKey reports whether k can be a bullet key.
func ValidKey(k string) bool { return validKey(k) }

// NewRalphID returns a ralph ID for now.
func NewRalphID(now time.Time) string { return newRalphID(now) }

// UniqueRalphID returns a ralph ID for now that data does not hold yet.
func UniqueRalphID(data []byte, now time.Time) string { return uniqueRalphID(data, now) }

// ValidRalphID reports whether id is a ralph ID.
func ValidRalphID(id string) bool { return validRalphID(id) }

// RalphUnix returns the Unix time a ralph ID was made at.
func RalphUnix(id string) int64 { return ralphUnix(id) }

// RalphSection returns the ralph section an entry of type t goes under.
func RalphSection(t string) string { return ralphSection(t) }

// RalphLastSection returns the last section of a ralph file.
func RalphLastSection(data []byte) (last string, plain bool) { return ralphLastSection(data) }

// RalphRefuses returns why ralph cannot hold e, or nil.
func RalphRefuses(e *Entry) error { return ralphRefuses(e) }

// Source returns the bytes f was parsed from by ParseOwned, or nil.
func (f *File) Source() []byte { return f.src }

// KeepID marks e's ID as its own, to be written out, no longer derived.
func (e *Entry) KeepID() { e.derived = false }

// RalphType returns the entry type a ralph section heading stands for.
func RalphType(heading string) string { return ralphType(heading) }

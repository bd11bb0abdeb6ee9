package remote

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/history"
)

// ClonesPrefix is where each clone pushes its snapshots on a remote: its
// own ref, ClonesPrefix + its clone ID.
const ClonesPrefix = "refs/memsync/clones/"

// cloneFile holds the repository's clone ID, in the common git dir's
// memsync folder (shared by its worktrees, never pushed).
const cloneFile = "clone"

// cloneIDShape is what a clone ID looks like: a short name taken from the
// git user's email (a person reading the remote's refs sees whose clone it
// is) and 8 random hex digits.
var cloneIDShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,40}$`) })

// CloneID is this repository's clone ID, made (and kept) on first use:
// its snapshots are pushed to ClonesPrefix + ID on every remote.
func CloneID(h *history.History) (string, error) {
	path := filepath.Join(h.Repo.CommonDir, "memsync", cloneFile)
	data, err := fsutil.ReadFile(path, 256)
	if err == nil {
		if id := strings.TrimSpace(string(data)); cloneIDShape().MatchString(id) {
			return id, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return newCloneID(h)
}

// newCloneID makes and keeps a new clone ID (the first, or one that
// replaces an ID another clone turned out to use too).
func newCloneID(h *history.History) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := idName(h.Author()) + "-" + hex.EncodeToString(b[:])
	dir := filepath.Join(h.Repo.CommonDir, "memsync")
	if err := fsutil.MkdirAll(dir, h.Store.DirPerm()); err != nil {
		return "", err
	}
	return id, fsutil.WriteFile(filepath.Join(dir, cloneFile), []byte(id+"\n"), h.Store.FilePerm())
}

// idName is the name part of a clone ID: the local part of the email in
// author ("Name <email>"), lower case, runs of other characters as one
// "-", at most 24 characters; "clone" when nothing is left.
func idName(author string) string {
	email := author
	if i := strings.LastIndexByte(author, '<'); i >= 0 {
		email = strings.TrimSuffix(author[i+1:], ">")
	}
	local, _, _ := strings.Cut(email, "@")
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(local) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		switch {
		case ok && dash && b.Len() > 0:
			b.WriteByte('-')
			fallthrough
		case ok:
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
		if b.Len() >= 24 {
			break
		}
	}
	if b.Len() == 0 {
		return "clone"
	}
	return strings.TrimRight(b.String(), "-")
}

// cloneRefOf is the remote ref a tracking ref of remote follows ("" when
// it is no ref memsync fetches).
func cloneRefOf(remote, tracking string) string {
	rest, ok := strings.CutPrefix(tracking, trackingPrefix(remote))
	switch {
	case !ok:
		return ""
	case rest == "snapshots":
		return history.Ref
	case strings.HasPrefix(rest, "clones/"):
		return ClonesPrefix + strings.TrimPrefix(rest, "clones/")
	}
	return ""
}

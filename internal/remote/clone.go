package remote

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// memsync folder (shared by its worktrees, never pushed). cloneHomeFile
// beside it says where the ID was made (cloneHome), so a copy of the
// repository (cp -a keeps the file) can tell it is one.
const (
	cloneFile     = "clone"
	cloneHomeFile = "clone-home"
)

// cloneIDShape is what a clone ID looks like: a short name taken from the
// git user's email (a person reading the remote's refs sees whose clone it
// is) and 8 random hex digits.
var cloneIDShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,40}$`) })

// cloneHome is where a clone ID was made: the common git dir's absolute
// path and its device and inode.
type cloneHome struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
}

// homeOf is where h's common git dir is now.
func homeOf(h *history.History) (cloneHome, error) {
	path, err := filepath.Abs(h.Repo.CommonDir)
	if err != nil {
		return cloneHome{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return cloneHome{}, err
	}
	home := cloneHome{Path: path}
	home.Dev, home.Ino, _ = fsutil.FileID(fi)
	return home, nil
}

// same reports whether a home kept beside an ID is still this repository's:
// a moved repository keeps its inode, one restored by copying keeps its path.
func (kept cloneHome) same(now cloneHome) bool {
	return kept.Path == now.Path || kept.Ino != 0 && kept.Dev == now.Dev && kept.Ino == now.Ino
}

// CloneID is this repository's clone ID, made (and kept) on first use:
// its snapshots are pushed to ClonesPrefix + ID on every remote. A
// repository copied from another (its ID kept where neither the common git
// dir's path nor its inode is the one the ID was made at) gets a new ID
// once, and note says so ("" otherwise). An ID kept with no home (an older
// memsync's) is kept, and its home written.
func CloneID(h *history.History) (id, note string, err error) {
	path := filepath.Join(h.Repo.CommonDir, "memsync", cloneFile)
	data, err := fsutil.ReadFile(path, 256)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	id = strings.TrimSpace(string(data))
	if err != nil || !cloneIDShape().MatchString(id) {
		id, err = newCloneID(h)
		return id, "", err
	}
	now, err := homeOf(h)
	if err != nil {
		return "", "", err
	}
	homePath := filepath.Join(h.Repo.CommonDir, "memsync", cloneHomeFile)
	var kept cloneHome
	data, err = fsutil.ReadFile(homePath, 64<<10)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && json.Unmarshal(data, &kept) != nil:
		return id, "", writeHome(h, now)
	case err != nil:
		return "", "", err
	case kept.same(now):
		if kept != now { // moved, or restored by copying: keep where it is now
			return id, "", writeHome(h, now)
		}
		return id, "", nil
	}
	old := id
	if id, err = newCloneID(h); err != nil {
		return "", "", err
	}
	return id, fmt.Sprintf("this repository is a copy of %s (clone %s): new clone ID %s", kept.Path, old, id), nil
}

// writeHome keeps home as where this repository's clone ID was made.
func writeHome(h *history.History, home cloneHome) error {
	data, err := json.Marshal(home)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(h.Repo.CommonDir, "memsync", cloneHomeFile), append(data, '\n'), h.Store.FilePerm())
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
	if err := fsutil.WriteFile(filepath.Join(dir, cloneFile), []byte(id+"\n"), h.Store.FilePerm()); err != nil {
		return "", err
	}
	home, err := homeOf(h)
	if err != nil {
		return "", err
	}
	return id, writeHome(h, home)
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

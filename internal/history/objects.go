package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/words"
)

// The snapshot's objects are few and simple (two blobs, two trees, a
// commit), so they are encoded and decoded here in git's own formats, and
// only go-git's object storage is used: go-git's object package would bring
// its OpenPGP signing code into every hook run's start-up time.

// treeEntry is one entry of a git tree.
type treeEntry struct {
	mode string // "100644" or "40000"
	name string
	hash plumbing.Hash
}

// encodeTree is the content of a tree object; entries are in git's order.
func encodeTree(entries []treeEntry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(e.hash[:])
	}
	return b.Bytes()
}

// commitInfo is a decoded commit.
type commitInfo struct {
	hash      plumbing.Hash
	tree      plumbing.Hash
	parents   []plumbing.Hash
	committer string // the raw "committer" line's value
	author    string // the author's "Name <email>", without the time
	message   string
}

// encodeCommit is the content of a snapshot's commit object, authored and
// committed by who (see History.identity); zero parents are left out (a
// merge snapshot has two).
func encodeCommit(tree plumbing.Hash, parents []plumbing.Hash, when time.Time, msg string, who identity) []byte {
	stamp := fmt.Sprintf(" %d %s", when.Unix(), when.Format("-0700"))
	var b strings.Builder
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		if !p.IsZero() {
			b.WriteString("parent " + p.String() + "\n")
		}
	}
	b.WriteString("author " + who.author + stamp + "\ncommitter " + who.committer + stamp + "\n\n" + msg)
	return []byte(b.String())
}

// identity is who a snapshot commit names: "Name <email>" for the author
// and the committer.
type identity struct{ author, committer string }

// identity is the git user, as git would name them for a commit in this
// repository: GIT_AUTHOR_NAME/EMAIL and GIT_COMMITTER_NAME/EMAIL, else
// user.name and user.email of the git config (system, global, repository,
// worktree; no git is spawned), else memsync's placeholder.
func (h *History) identity() identity {
	cfg := gitconfig.Effective(h.Repo.CommonDir, h.Repo.GitDir)
	pick := func(env, key, fallback string) string {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v
		}
		if v, ok := cfg.Get(key); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return fallback
	}
	clean := func(s string) string { return strings.NewReplacer("<", "", ">", "", "\n", " ").Replace(s) }
	sig := func(role string) string {
		return clean(pick("GIT_"+role+"_NAME", "user.name", identityName)) + " <" + clean(pick("GIT_"+role+"_EMAIL", "user.email", identityEmail)) + ">"
	}
	return identity{author: sig("AUTHOR"), committer: sig("COMMITTER")}
}

// ErrTooBig is the error of a snapshot that holds an object larger than
// memsync reads (a *TooBigError says which and how large).
var ErrTooBig = errors.New("snapshot too large")

// TooBigError is a snapshot object that memsync refuses to read: its size,
// from the object's header, is over the limit. Nothing of it was read.
type TooBigError struct {
	Commit string // the snapshot ("" when not known where the object was read)
	Path   string // memories.md, archive/memories.md, or the object's kind
	Size   int64
	Limit  int64
}

func (e *TooBigError) Error() string {
	in := ""
	if e.Commit != "" {
		in = "snapshot " + words.Short(e.Commit) + ": "
	}
	return fmt.Sprintf("%s%s is %s, more than the %s memsync reads", in, e.Path, words.Bytes(e.Size), words.Bytes(e.Limit))
}

// Unwrap makes errors.Is(err, ErrTooBig) work.
func (e *TooBigError) Unwrap() error { return ErrTooBig }

// maxMeta bounds a commit or tree memsync reads: a snapshot's are a few
// hundred bytes.
const maxMeta = 1 << 20

// readObject reads an object's content, loose or packed, of at most limit
// bytes: the size in the object's header is checked before anything of its
// content is read (a larger one is a *TooBigError).
func readObject(st *filesystem.Storage, t plumbing.ObjectType, h plumbing.Hash, limit int64) ([]byte, error) {
	if size, err := st.EncodedObjectSize(h); err == nil && size > limit {
		return nil, &TooBigError{Path: t.String() + " " + h.String(), Size: size, Limit: limit}
	}
	o, err := st.EncodedObject(t, h)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", t, h, err)
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(io.LimitReader(r, limit))
}

func readCommit(st *filesystem.Storage, h plumbing.Hash) (*commitInfo, error) {
	data, err := readObject(st, plumbing.CommitObject, h, maxMeta)
	if err != nil {
		return nil, err
	}
	return parseCommit(h, data), nil
}

// parseCommit decodes the content of commit h.
func parseCommit(h plumbing.Hash, data []byte) *commitInfo {
	c := &commitInfo{hash: h}
	head, msg, _ := strings.Cut(string(data), "\n\n")
	c.message = msg
	for _, l := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "tree":
			c.tree = plumbing.NewHash(v)
		case "parent":
			c.parents = append(c.parents, plumbing.NewHash(v))
		case "committer":
			c.committer = v
		case "author":
			if i := strings.LastIndexByte(v, '>'); i >= 0 {
				v = v[:i+1]
			}
			c.author = v
		}
	}
	return c
}

// when is the commit's committer time.
func (c *commitInfo) when() time.Time {
	f := strings.Fields(c.committer[strings.LastIndexByte(c.committer, '>')+1:])
	if len(f) != 2 {
		return time.Time{}
	}
	sec, _ := strconv.ParseInt(f[0], 10, 64)
	tz, _ := strconv.Atoi(f[1])
	off := (tz/100*60 + tz%100) * 60
	return time.Unix(sec, 0).In(time.FixedZone("", off))
}

func readTree(st *filesystem.Storage, h plumbing.Hash) ([]treeEntry, error) {
	data, err := readObject(st, plumbing.TreeObject, h, maxMeta)
	if err != nil {
		return nil, err
	}
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+20 {
			return nil, fmt.Errorf("tree %s is damaged", h)
		}
		var e treeEntry
		e.mode, e.name = string(data[:sp]), string(data[sp+1:nul])
		copy(e.hash[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// object is an object of a snapshot, hashed but not written yet. It is a
// plumbing.EncodedObject that go-git can write without copying its data.
type object struct {
	typ  plumbing.ObjectType
	hash plumbing.Hash
	data []byte
}

func newObject(t plumbing.ObjectType, data []byte) *object {
	return &object{typ: t, hash: plumbing.ComputeHash(t, data), data: data}
}

// Hash is the object's id.
func (o *object) Hash() plumbing.Hash { return o.hash }

// Type is the object's type.
func (o *object) Type() plumbing.ObjectType { return o.typ }

// SetType is not supported: the object is immutable.
func (o *object) SetType(plumbing.ObjectType) {}

// Size is the length of the object's content.
func (o *object) Size() int64 { return int64(len(o.data)) }

// SetSize is not supported: the object is immutable.
func (o *object) SetSize(int64) {}

// Reader reads the object's content.
func (o *object) Reader() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(o.data)), nil }

// Writer is not supported: the object is immutable.
func (o *object) Writer() (io.WriteCloser, error) {
	return nil, fmt.Errorf("history: a snapshot object cannot be written to")
}

package memsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/provenance"
	"github.com/memsync/memsync/memfile"
)

// EditOptions say what Edit changes; what is left nil stays as it is.
type EditOptions struct {
	Content *string
	// Title is the new heading text; "" derives it from the content. Left
	// nil, a title that was derived from the old content (the content's
	// first line) follows the new content; one set by hand stays.
	Title *string
	// Type is the new type; "" removes it.
	Type *string
	// Tags are the new tags; nil leaves them, an empty (non-nil) list
	// removes them all.
	Tags []string
}

// ErrNothingToEdit is what Edit returns (wrapped) when EditOptions change nothing.
var ErrNothingToEdit = errors.New("nothing to change: give the content, title, tags or type")

// EditResult is what Edit did.
type EditResult struct {
	Entry   Entry `json:"entry"`
	Changed bool  `json:"changed" jsonschema:"false when the entry already read so; nothing was written"`
}

// Edit changes an active entry in place, under the writers' lock in one
// atomic rewrite: its ID, date and other bullets stay, and an "Edited"
// bullet records when and by whom (the git author). ref names the entry as
// Get's references do. An edit that leaves the entry as it was writes
// nothing (Changed false). Where the memory keeps history, it is
// snapshotted first, so Rollback undoes the edit. Owner and admin only.
func (m *Memory) Edit(ctx context.Context, ref string, o EditOptions) (EditResult, error) {
	if o.Content == nil && o.Title == nil && o.Type == nil && o.Tags == nil {
		return EditResult{}, fmt.Errorf("%w: %w", memfile.ErrInvalid, ErrNothingToEdit)
	}
	if o.Content != nil && strings.TrimSpace(*o.Content) == "" {
		return EditResult{}, fmt.Errorf("%w: %w", memfile.ErrInvalid, ErrEmpty)
	}
	st, err := m.beginWrite(ctx, policy.OpEdit, "edit")
	if err != nil {
		return EditResult{}, err
	}
	var res EditResult
	err = st.Update(func(f *memfile.File) error {
		m.reportDamage(m.store.Path(), f)
		i, err := f.Find(ref)
		if err != nil {
			return err
		}
		e := f.Entries[i]
		e.Extra = append([]memfile.Field(nil), e.Extra...) // SetField must not reach the file's entry before the checks pass
		before := memfile.RenderEntry(&e, memfile.Orch)
		applyEdit(&e, o)
		if memfile.RenderEntry(&e, memfile.Orch) == before {
			res = EditResult{Entry: entryOf(&f.Entries[i], i+1)}
			return errUnchanged
		}
		e.SetField(provenance.EditedField, provenance.Edited(time.Now(), m.writer().Author))
		if err := m.store.Validate(&e); err != nil {
			return err
		}
		if err := m.store.CheckDialect(&e); err != nil {
			return err
		}
		f.Entries[i] = e
		res = EditResult{Entry: entryOf(&e, i+1), Changed: true}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	if err != nil {
		return EditResult{}, err
	}
	return res, nil
}

// errUnchanged ends an Update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// applyEdit sets what o changes on e (see EditOptions for the title).
func applyEdit(e *memfile.Entry, o EditOptions) {
	derived := e.Title == "" || e.Title == memfile.TitleFrom(e.Content)
	if o.Content != nil {
		e.Content = *o.Content
	}
	switch {
	case o.Title != nil && strings.TrimSpace(*o.Title) != "":
		e.Title = strings.TrimSpace(*o.Title)
	case o.Title != nil || derived:
		e.Title = memfile.TitleFrom(e.Content)
	}
	if o.Type != nil {
		e.SetType(*o.Type)
	}
	if o.Tags != nil {
		e.Tags = nil
		for _, t := range o.Tags {
			if t = strings.TrimSpace(t); t != "" {
				e.Tags = append(e.Tags, t)
			}
		}
	}
}

// EditText is the text a person edits to change e by hand (memsync edit
// with $EDITOR): its heading, tags and content as the memory file spells
// them, under a comment that says what to do. ParseEdit reads it back.
func EditText(e Entry) string {
	x := memfile.Entry{Type: e.Type, Title: e.Title, Tags: e.Tags, Content: e.Content}
	return "# memsync edit " + e.ID + ": change the heading, the tags and the content, then save\n" +
		"# and quit. The ID, the date and the other bullets stay as they are. Text\n" +
		"# above the first '## ' line is ignored; leave no entry to cancel.\n\n" +
		memfile.RenderEntry(&x, memfile.Orch)
}

// ParseEdit reads back the text EditText gave for e, as the person left
// it: what changed, for Edit. A heading left as it was leaves the title to
// Edit's rule (a derived title follows the content). No entry is
// ErrEditCancelled; more than one is an error.
func ParseEdit(e Entry, text []byte) (EditOptions, error) {
	f := memfile.Parse(text)
	switch len(f.Entries) {
	case 0:
		return EditOptions{}, ErrEditCancelled
	case 1:
	default:
		return EditOptions{}, fmt.Errorf("%w: the edited file holds %d entries; keep one", memfile.ErrInvalid, len(f.Entries))
	}
	x := f.Entries[0]
	o := EditOptions{Content: &x.Content, Type: &x.Type, Tags: x.TagList()}
	if x.Title != e.Title {
		o.Title = &x.Title
	}
	return o, nil
}

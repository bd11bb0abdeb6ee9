package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func editCommand() command {
	return command{name: "edit", usage: "change an entry's content, title, tags or type (in $EDITOR, or with flags)", argsUsage: "ID",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "content", Usage: "the new content ('-' reads it from stdin)"},
			&cli.StringFlag{Name: "title", Usage: "the new heading ('' derives it from the content)"},
			&cli.StringFlag{Name: "tags", Usage: "the new comma-separated tags ('' removes them)"},
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "the new type ('' removes it)"},
		},
		args: oneArg("edit needs one ID, got %d"),
		run:  runEdit,
	}
}

func runEdit(s *session, c *cli.Context) error {
	ref := c.Args().First()
	var o memsync.EditOptions
	if c.IsSet("content") {
		v := c.String("content")
		if v == "-" {
			var err error
			if v, err = stdinContent(c); err != nil {
				return err
			}
		}
		o.Content = &v
	}
	if c.IsSet("title") {
		o.Title = new(c.String("title"))
	}
	if c.IsSet("type") {
		o.Type = new(c.String("type"))
	}
	if c.IsSet("tags") {
		o.Tags = append([]string{}, memsync.SplitList(c.String("tags"))...)
	}
	if o.Content == nil && o.Title == nil && o.Type == nil && o.Tags == nil {
		// Refused before the editor opens, not after (Edit checks again).
		if err := s.m.Allow("edit"); err != nil {
			return err
		}
		got, err := s.m.Get(c.Context, memsync.View{}, ref)
		if err != nil {
			return err
		}
		data, err := runEditor(s, "memsync-edit-*.md", memsync.EditText(got[0]))
		if err != nil {
			return err
		}
		if o, err = memsync.ParseEdit(got[0], data); errors.Is(err, memsync.ErrEditCancelled) {
			fmt.Fprintf(s.stderr, "memsync: %v\n", err)
			return nil
		} else if err != nil {
			return withHint(err, "keep exactly one entry (or none to cancel); nothing was changed")
		}
		ref = got[0].ID
	}
	res, err := s.m.Edit(c.Context, ref, o)
	return s.print(res.Entry, err, func() {
		if !res.Changed {
			s.printf("%s unchanged\n", res.Entry.ID)
			return
		}
		s.printf("edited %s\n", res.Entry.ID+"  "+res.Entry.Heading())
	})
}

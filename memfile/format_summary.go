package memfile

// Summary describes a memory file: counts by type and tag, date range, size.
type Summary struct {
	Entries int            `json:"entries"`
	Bytes   int64          `json:"bytes"` // set by the caller: the file's size on disk
	Types   map[string]int `json:"types"` // "" counts entries without a type
	Tags    map[string]int `json:"tags"`
	Oldest  string         `json:"oldest,omitempty"` // smallest Date
	Newest  string         `json:"newest,omitempty"` // largest Date
}

// Summarize counts what f holds (Bytes is left to the caller).
func Summarize(f *File) Summary {
	s := Summary{Entries: len(f.Entries), Types: map[string]int{}, Tags: map[string]int{}}
	for i := range f.Entries {
		e := &f.Entries[i]
		s.Types[e.Type]++
		for _, t := range e.Tags {
			s.Tags[t]++
		}
		if e.Date == "" {
			continue
		}
		if s.Oldest == "" || e.Date < s.Oldest {
			s.Oldest = e.Date
		}
		if e.Date > s.Newest {
			s.Newest = e.Date
		}
	}
	return s
}

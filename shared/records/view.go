package records

import (
	"time"

	"contentapi/shared/generation"
)

// View is how records read at one moment, beyond their stored fields: the
// generation state as the 15-minute rule has it then, and fresh links to
// stored pictures.
type View struct {
	Now time.Time
	// Generation is on: records show their generation state; off, they
	// show null.
	Generation bool
	// PictureURL links a stored picture by its file name; nil where there
	// is no bucket.
	PictureURL func(name string) (string, error)
	// List is on for the items of a list, which leave out what only a
	// record's own answer shows (a document's results).
	List bool
}

// State is a record's stored generation state as it reads now, or nil
// when generation is off or the record has none.
func (v View) State(s *generation.State) *generation.State {
	if !v.Generation || s == nil || s.Status == "" {
		return nil
	}
	at := s.At(v.Now)
	return &at
}

// URL links the picture named result, or nil when there is none or no
// bucket to link into.
func (v View) URL(result *string) (*string, error) {
	if result == nil || v.PictureURL == nil {
		return nil, nil
	}
	u, err := v.PictureURL(*result)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

package records

// Render is how a resource's stored records read as the API shows them:
// decoded into the resource's own type and finished for the view
// (RenderAs). The storage decodes; a resource never sees how records are
// stored.
type Render interface {
	Render(stored Stored, view View) (any, error)
}

// Stored is one record as stored, which decodes into a pointer to the
// resource's type by its `dynamodbav` field names.
type Stored interface {
	Decode(out any) error
}

// RenderAs renders records as T: each decoded into a T, then finished by
// finish (nil: none) with what the view adds (the generation state as it
// reads now, a picture's link).
func RenderAs[T any](finish func(*T, View) error) Render { return renderAs[T](finish) }

type renderAs[T any] func(*T, View) error

func (finish renderAs[T]) Render(stored Stored, view View) (any, error) {
	var v T
	if err := stored.Decode(&v); err != nil {
		return nil, err
	}
	if finish != nil {
		if err := finish(&v, view); err != nil {
			return nil, err
		}
	}
	return v, nil
}

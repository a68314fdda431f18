package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kilnml/kiln/internal/mmapfile"
)

// external opens the files that tensors with data_location EXTERNAL point
// to. Names are resolved inside the model's directory through os.Root, so
// "..", absolute paths and symbolic links cannot reach other files. Each
// file is memory-mapped once and stays mapped until the model is closed.
type external struct {
	dir   string
	root  *os.Root
	files map[string]*mmapfile.File
}

func newExternal(dir string) *external {
	return &external{dir: dir, files: map[string]*mmapfile.File{}}
}

func (e *external) read(t *TensorProto, want int) ([]byte, error) {
	loc, err := parseExternal(t)
	if err != nil {
		return nil, err
	}
	f, ok := e.files[loc.location]
	if !ok {
		name := filepath.FromSlash(loc.location)
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("tensor %q: external file %q is outside the model's directory", t.Name, loc.location)
		}
		if e.root == nil {
			if e.root, err = os.OpenRoot(e.dir); err != nil {
				return nil, fmt.Errorf("tensor %q: external data: %w", t.Name, err)
			}
		}
		if f, err = mmapfile.OpenIn(e.root, name); err != nil {
			return nil, fmt.Errorf("tensor %q: external file %q: %w", t.Name, loc.location, err)
		}
		e.files[loc.location] = f
	}
	return loc.slice(t.Name, f.Bytes(), want)
}

// close unmaps every file; views into them become invalid.
func (e *external) close() error {
	if e == nil {
		return nil
	}
	var errs []error
	for _, f := range e.files {
		errs = append(errs, f.Close())
	}
	e.files = nil
	if e.root != nil {
		errs = append(errs, e.root.Close())
		e.root = nil
	}
	return errors.Join(errs...)
}

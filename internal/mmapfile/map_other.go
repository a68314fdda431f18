//go:build !unix

package mmapfile

import (
	"errors"
	"os"
)

// mapFile is not available here; FromOS falls back to reading.
func mapFile(fd *os.File, size int) ([]byte, func([]byte) error, error) {
	return nil, nil, errors.New("mmapfile: mapping not supported on this platform")
}

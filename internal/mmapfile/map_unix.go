//go:build unix

package mmapfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of fd read-only and shared, so the pages come
// straight from the page cache.
func mapFile(fd *os.File, size int) ([]byte, func([]byte) error, error) {
	data, err := unix.Mmap(int(fd.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, unix.Munmap, nil
}

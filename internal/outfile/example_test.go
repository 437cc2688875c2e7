package outfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fdkit/fdkit/internal/outfile"
)

// A command stages its result files and moves them in together; until
// Commit, the destination holds none of them.
func Example() {
	dir, _ := os.MkdirTemp("", "results")
	defer os.RemoveAll(dir)

	st, err := outfile.New(dir, "mycmd")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Abort() // after an error: nothing left behind
	_ = st.Write("table.csv", func(w io.Writer) error {
		_, err := io.WriteString(w, "detector,mistakes\nfixed,0\n")
		return err
	})
	_, err = os.Stat(filepath.Join(dir, "table.csv"))
	fmt.Println("before Commit:", os.IsNotExist(err))

	files, err := st.Commit(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after Commit:", filepath.Base(files[0]))
	// Output:
	// before Commit: true
	// after Commit: table.csv
}

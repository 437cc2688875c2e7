package figure

import (
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// SetPDFDate fixes the creation and modification dates written into the
// PDF figures made afterwards (Save, Write, as t in UTC); by default each
// PDF carries the time it was written, so that two runs never give
// identical files. Commands set it from SOURCE_DATE_EPOCH (the
// reproducible-builds.org convention). It sets the PDF writer's
// package-wide default: call it before any figure is written, not while
// one is. The zero time restores the default.
func SetPDFDate(t time.Time) {
	if !t.IsZero() {
		t = t.UTC()
	}
	fpdf.SetDefaultCreationDate(t)
	fpdf.SetDefaultModificationDate(t)
}

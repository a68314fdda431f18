module github.com/kilnml/kiln

go 1.26

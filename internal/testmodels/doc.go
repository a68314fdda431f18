// Package testmodels holds small end-to-end models shared by kiln's tests:
// graph builders for an MLP, a CNN block and a transformer encoder layer,
// deterministic random feeds for any graph, and the reference inputs,
// weights and outputs that ops/testdata/gen_reference.py computed for the
// three models with torch in float64 (embedded from testdata/).
//
// Param names are the contract with the generator: a model's JSON holds one
// tensor per param of the graph its builder makes, under the same name.
package testmodels

//! The learning problems, one module per formulation. A formulation builds a problem from
//! data, maps a solution back to a fitted model, and a fitted model back to a starting
//! point; it knows nothing about a particular solver.

//! tcplab's Python bindings: conversion and error mapping only. The engine is `tcplab-sim`.

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use tcplab_sim::{Column, SimResult, Simulation, Spec, Table};

create_exception!(_core, SpecError, PyValueError, "A spec the engine cannot run: args are (field, value, allowed).");

fn spec_error(e: tcplab_sim::SpecError) -> PyErr {
    SpecError::new_err((e.field, e.value, e.allowed))
}

fn table<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        match col {
            Column::U64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::F64(v) => d.set_item(name, v.into_pyarray(py))?,
        }
    }
    Ok(d)
}

fn to_py<'py>(py: Python<'py>, r: SimResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("flows", table(py, r.flows)?)?;
    out.set_item("intervals", table(py, r.intervals)?)?;
    out.set_item("queues", table(py, r.queues)?)?;
    let meta = PyDict::new(py);
    meta.set_item("transmissions", r.transmissions)?;
    meta.set_item("events", r.events)?;
    meta.set_item("end_ns", r.end_ns)?;
    meta.set_item("node_names", r.node_names)?;
    out.set_item("meta", meta)?;
    Ok(out)
}

/// Run one simulation of an engine spec (JSON text, see docs/engine-spec.md). Releases the GIL
/// while it runs and honours Ctrl-C (the pending signal is raised, e.g. KeyboardInterrupt).
#[pyfunction]
fn simulate<'py>(py: Python<'py>, spec_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let spec = Spec::from_json(spec_json).map_err(spec_error)?;
    let sim = Simulation::new(&spec).map_err(spec_error)?;
    let mut interrupt: Option<PyErr> = None;
    let result = py.detach(|| {
        sim.run_until_cancelled(|| {
            // Take the GIL briefly to let Python run its signal handlers.
            interrupt = Python::attach(|py| py.check_signals().err());
            interrupt.is_some()
        })
    });
    match (result, interrupt) {
        (Some(r), _) => to_py(py, r),
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("cancelled only on a signal"),
    }
}

/// The engine's version.
#[pyfunction]
fn version() -> &'static str {
    tcplab_sim::VERSION
}

/// Congestion-control names the engine knows.
#[pyfunction]
fn congestion_controls() -> Vec<&'static str> {
    tcplab_sim::cc::NAMES.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    Ok(())
}

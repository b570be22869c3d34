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
    if let Some(capture) = r.capture {
        out.set_item("capture", table(py, capture)?)?;
    }
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

/// Every congestion control the engine knows, as dicts: name, aliases, about, reference, linux,
/// and params (each: name, default, min, max, help).
#[pyfunction]
fn congestion_controls(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    tcplab_sim::cc::ALGORITHMS
        .iter()
        .map(|a| {
            let d = PyDict::new(py);
            d.set_item("name", a.name)?;
            d.set_item("aliases", a.aliases.to_vec())?;
            d.set_item("about", a.about)?;
            d.set_item("reference", a.reference)?;
            d.set_item("linux", a.linux)?;
            d.set_item("needs_ecn", a.needs_ecn)?;
            let params = a
                .params
                .iter()
                .map(|p| {
                    let pd = PyDict::new(py);
                    pd.set_item("name", p.name)?;
                    pd.set_item("default", p.default)?;
                    pd.set_item("min", p.min)?;
                    pd.set_item("max", p.max)?;
                    pd.set_item("help", p.help)?;
                    Ok(pd)
                })
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("params", params)?;
            Ok(d)
        })
        .collect()
}

/// Parameter profiles: "linux" (today's defaults) and older kernels' (e.g. "linux-2.6.22").
#[pyfunction]
fn cc_profiles() -> Vec<&'static str> {
    tcplab_sim::cc::profile_names()
}

/// The round trips a TCP flow's `preamble` ("none", "handshake", "iperf3") sends before its data,
/// as dicts: syn, data_connection, request_bytes, reply_bytes (IP bytes with or without
/// timestamps).
#[pyfunction]
fn preamble_steps<'py>(py: Python<'py>, preamble: &str, timestamps: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let which = match preamble {
        "none" => tcplab_sim::spec::Preamble::None,
        "handshake" => tcplab_sim::spec::Preamble::Handshake,
        "iperf3" => tcplab_sim::spec::Preamble::Iperf3,
        other => return Err(PyValueError::new_err(format!("preamble '{other}': expected 'none', 'handshake' or 'iperf3'"))),
    };
    tcplab_sim::transport::tcp::setup::steps(which)
        .iter()
        .map(|s| {
            let d = PyDict::new(py);
            let (request, reply) = s.sizes(timestamps);
            d.set_item("syn", s.syn)?;
            d.set_item("data_connection", s.data_connection)?;
            d.set_item("request_bytes", request)?;
            d.set_item("reply_bytes", reply)?;
            Ok(d)
        })
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(cc_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(preamble_steps, m)?)?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    Ok(())
}

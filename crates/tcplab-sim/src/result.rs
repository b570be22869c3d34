//! What a run returns: three column tables (flows, intervals, queues) and a few totals.

#[derive(Clone, Debug)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
}

/// Equal values, NaN equal to NaN (a value that is not there, as `pacing_rate_bps` of a flow that
/// does not pace): two runs of one seed give equal tables.
impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        match (self, other) {
            (Column::U64(a), Column::U64(b)) => a == b,
            (Column::F64(a), Column::F64(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x.is_nan() && y.is_nan())),
            _ => false,
        }
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `row` as a float (tests and summaries).
    pub fn get(&self, row: usize) -> f64 {
        match self {
            Column::U64(v) => v[row] as f64,
            Column::F64(v) => v[row],
        }
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &'static str, col: Column) {
        debug_assert!(self.columns.first().is_none_or(|(_, c)| c.len() == col.len()), "column {name} has a different length");
        self.columns.push((name, col));
    }

    pub fn col(&self, name: &str) -> &Column {
        &self.columns.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no column {name}")).1
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    pub flows: Table,
    pub intervals: Table,
    pub queues: Table,
    /// The spec's `capture`: one row per recorded link crossing (`capture.rs`); `None` without one.
    pub capture: Option<Table>,
    /// Packets that crossed a link (one packet crossing one link = one transmission).
    pub transmissions: u64,
    pub events: u64,
    pub end_ns: u64,
    pub node_names: Vec<String>,
}

impl SimResult {
    /// Per-interval values of `column` for `flow`, in time order.
    pub fn series(&self, flow: u32, column: &str) -> Vec<f64> {
        let f = self.intervals.col("flow");
        let c = self.intervals.col(column);
        (0..self.intervals.rows()).filter(|&r| f.get(r) as u32 == flow).map(|r| c.get(r)).collect()
    }

    /// A per-flow summary value.
    pub fn flow(&self, flow: u32, column: &str) -> f64 {
        self.flows.col(column).get(flow as usize)
    }
}

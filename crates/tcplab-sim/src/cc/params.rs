//! Named algorithm parameters: each algorithm declares its Linux defaults with a range and a help
//! line (what `tcplab variants NAME` lists); a scenario overrides them by name, directly or through
//! a profile such as `linux-2.6.22`.

use std::collections::BTreeMap;

use crate::error::SpecError;

/// One parameter of a congestion control, in the unit users think in (e.g. CUBIC's beta as 0.7,
/// not 717/1024); the algorithm converts to its fixed-point scale when it is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub help: &'static str,
}

/// The values an algorithm is built with: its defaults, overridden by a profile, overridden by
/// the scenario.
#[derive(Clone, Debug, Default)]
pub struct ParamValues {
    values: BTreeMap<&'static str, f64>,
}

impl ParamValues {
    /// Defaults of `params`, then the `profile`'s values, then `given`; every name and value
    /// checked. `field` names the scenario field for error messages (`flows[0].cc_params`).
    pub fn resolve(
        params: &'static [Param],
        profile: &[(&'static str, f64)],
        given: &BTreeMap<String, f64>,
        field: &str,
    ) -> Result<ParamValues, SpecError> {
        let mut values: BTreeMap<&'static str, f64> = params.iter().map(|p| (p.name, p.default)).collect();
        for &(name, v) in profile {
            values.insert(name, v);
        }
        for (name, &v) in given {
            let Some(p) = params.iter().find(|p| p.name == name) else {
                let allowed = if params.is_empty() {
                    "no parameters (this algorithm has none)".to_string()
                } else {
                    format!("one of {}", params.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))
                };
                return Err(SpecError::new(format!("{field}.{name}"), v, allowed));
            };
            values.insert(p.name, v);
        }
        for p in params {
            let v = values[p.name];
            if !(p.min..=p.max).contains(&v) || v.is_nan() {
                return Err(SpecError::new(format!("{field}.{}", p.name), v, format!("{} to {} ({})", p.min, p.max, p.help)));
            }
        }
        Ok(ParamValues { values })
    }

    /// The value of a declared parameter.
    pub fn get(&self, name: &str) -> f64 {
        *self.values.get(name).unwrap_or_else(|| panic!("undeclared parameter {name}"))
    }

    /// A boolean parameter (declared with range 0..=1).
    pub fn flag(&self, name: &str) -> bool {
        self.get(name) != 0.0
    }

    /// `get(name)` scaled to a fixed-point integer, e.g. `scaled("beta", 1024.0)` = 717 for 0.7.
    pub fn scaled(&self, name: &str, scale: f64) -> u32 {
        (self.get(name) * scale).round() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[Param] = &[
        Param { name: "beta", default: 0.7, min: 0.1, max: 1.0, help: "window after a loss" },
        Param { name: "fast", default: 1.0, min: 0.0, max: 1.0, help: "flag" },
    ];

    #[test]
    fn defaults_then_profile_then_scenario() {
        let none = BTreeMap::new();
        let v = ParamValues::resolve(P, &[], &none, "f").unwrap();
        assert_eq!((v.get("beta"), v.flag("fast"), v.scaled("beta", 1024.0)), (0.7, true, 717));
        let v = ParamValues::resolve(P, &[("beta", 0.8)], &none, "f").unwrap();
        assert_eq!(v.scaled("beta", 1024.0), 819);
        let given = BTreeMap::from([("beta".to_string(), 0.5)]);
        assert_eq!(ParamValues::resolve(P, &[("beta", 0.8)], &given, "f").unwrap().get("beta"), 0.5);
    }

    #[test]
    fn unknown_names_and_values_out_of_range_are_refused() {
        let e = ParamValues::resolve(P, &[], &BTreeMap::from([("gamma".to_string(), 1.0)]), "flows[0].cc_params").unwrap_err();
        assert_eq!((e.field.as_str(), e.allowed.as_str()), ("flows[0].cc_params.gamma", "one of beta, fast"));
        let e = ParamValues::resolve(P, &[], &BTreeMap::from([("beta".to_string(), 2.0)]), "f").unwrap_err();
        assert_eq!(e.field, "f.beta");
        assert!(e.allowed.starts_with("0.1 to 1"));
    }
}

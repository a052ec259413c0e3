//! Parameter types used by the catalogue.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Matching strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Fast, approximate matching.
    #[default]
    Fast,
    /// Exact matching.
    Exact,
    /// Fuzzy matching.
    Fuzzy,
}

/// A shape to draw (externally tagged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius in pixels.
        radius: f64,
    },
    /// A square.
    Square {
        /// Side length in pixels.
        side: f64,
    },
    /// A single point.
    Point,
}

/// An event to send (internally tagged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A click at a position.
    Click {
        /// Horizontal position.
        x: i32,
        /// Vertical position.
        y: i32,
    },
    /// A key press.
    Key {
        /// The key pressed.
        key: String,
    },
}

/// A record key (untagged): a numeric id or a name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Key {
    /// A numeric id.
    Id(u64),
    /// A name.
    Name(String),
}

/// A postal address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// City name.
    pub city: String,
    /// Postal code, if known.
    pub postcode: Option<String>,
}

/// A user to create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewUser {
    /// Full name.
    pub name: String,
    /// Age in years.
    pub age: u8,
    /// Home address.
    pub address: Address,
    /// Other addresses.
    #[serde(default)]
    pub other_addresses: Vec<Address>,
}

/// An arithmetic expression tree (recursive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    /// A number.
    Num(f64),
    /// The sum of two expressions.
    Add(Box<Expr>, Box<Expr>),
    /// The negation of an expression.
    Neg(Box<Expr>),
}

impl Expr {
    /// Evaluates the expression.
    pub fn eval(&self) -> f64 {
        match self {
            Expr::Num(n) => *n,
            Expr::Add(a, b) => a.eval() + b.eval(),
            Expr::Neg(e) => -e.eval(),
        }
    }
}

/// Options showing serde's renaming and defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameOptions {
    /// Maximum results per page.
    pub page_size: u32,
    /// Whether to include archived items.
    #[serde(default)]
    pub include_archived: bool,
    /// Sort key, sent as `orderBy`.
    #[serde(rename = "orderBy", default = "default_order")]
    pub sort_key: String,
}

fn default_order() -> String {
    "name".to_owned()
}

/// Arguments of the struct-parameter search tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Text to search for.
    pub query: String,
    /// Maximum number of hits to return.
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Minimum relevance score (0-1) for a hit to be included.
    pub threshold: Option<f64>,
    /// Only return documents carrying all of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Matching strategy to use.
    #[serde(default)]
    pub mode: Mode,
}

/// Summary statistics (returned as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stats {
    /// Number of values.
    pub count: usize,
    /// Sum of the values.
    pub sum: i64,
    /// Smallest value.
    pub min: Option<i64>,
    /// Largest value.
    pub max: Option<i64>,
}

//! Provider schema dialects (placeholder until implemented).

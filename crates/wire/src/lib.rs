//! portcullis-wire

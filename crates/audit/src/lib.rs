//! portcullis-audit

//! portcullis-policy

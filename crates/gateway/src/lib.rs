//! portcullis-gateway

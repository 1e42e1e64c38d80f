pub mod WKWebView;

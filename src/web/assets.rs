//! The page's files, compiled into the binary (nothing is fetched from
//! anywhere else): lichess's chessground board (vendored, see
//! `src/web/assets/chessground/VENDOR.md`) and the page's own script and
//! stylesheet. `serve` answers them under `/assets/NAME`.

/// One file.
#[derive(Clone, Copy, Debug)]
pub struct Asset {
    /// Its name under `/assets/`.
    pub name: &'static str,
    /// Its content type.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file, in the order the page loads them.
pub const ASSETS: &[Asset] = &[
    Asset {
        name: "chessground.base.css",
        content_type: CSS,
        body: include_bytes!("assets/chessground/chessground.base.css"),
    },
    Asset {
        name: "chessground.brown.css",
        content_type: CSS,
        body: include_bytes!("assets/chessground/chessground.brown.css"),
    },
    Asset {
        name: "chessground.cburnett.css",
        content_type: CSS,
        body: include_bytes!("assets/chessground/chessground.cburnett.css"),
    },
    Asset {
        name: "browse.css",
        content_type: CSS,
        body: include_bytes!("assets/browse.css"),
    },
    Asset {
        name: "chessground.min.js",
        content_type: JS,
        body: include_bytes!("assets/chessground/chessground.min.js"),
    },
    Asset {
        name: "browse.js",
        content_type: JS,
        body: include_bytes!("assets/browse.js"),
    },
    Asset {
        name: "chessground.LICENSE.txt",
        content_type: "text/plain; charset=utf-8",
        body: include_bytes!("assets/chessground/LICENSE"),
    },
];

/// The file named `name` (the part of the path after `/assets/`).
pub fn get(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The stylesheets, in the order the page links them.
pub fn stylesheets() -> impl Iterator<Item = &'static Asset> {
    ASSETS.iter().filter(|a| a.content_type == CSS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_found_by_name_and_none_reaches_out() {
        for a in ASSETS {
            assert!(!a.body.is_empty(), "{}", a.name);
            assert_eq!(get(a.name).unwrap().name, a.name);
            if a.content_type != "text/plain; charset=utf-8" {
                // No file loads anything from another host: the only URL
                // is the SVG namespace name (chessground's
                // createElementNS); images are data: URIs.
                let text = std::str::from_utf8(a.body)
                    .unwrap()
                    .replace("\"http://www.w3.org/2000/svg\"", "");
                for bad in ["http://", "https://", "@import", "//cdn"] {
                    assert!(!text.contains(bad), "{} contains {bad}", a.name);
                }
            }
        }
        assert!(get("../Cargo.toml").is_none());
        assert!(get("").is_none());
        assert_eq!(stylesheets().count(), 4);
    }
}

//! What every plot shares: the TrueType font for text in PNG and SVG files (read at run
//! time, no system font library is linked), and saving a figure to `.png` or `.svg` by the
//! file's extension without leaving a partial file behind.
//!
//! Fonts: the file named by `GLASSBOX_FONT`, else a DejaVu / Liberation / Noto sans font from
//! the usual system folders. Without one a figure is drawn without text and
//! [`save`] returns [`NO_FONT_NOTE`].

use crate::{GlassboxError, Result};
use plotters::prelude::{BitMapBackend, DrawingBackend, SVGBackend};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The note given when a plot had to be drawn without text.
pub const NO_FONT_NOTE: &str = "no TrueType font found, so the plot has no text: set \
     GLASSBOX_FONT=/path/to/font.ttf (or install fonts-dejavu-core)";

/// Registers a TrueType font as plotters' "sans-serif" once; whether one was found.
pub fn font_available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let mut candidates: Vec<std::path::PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("GLASSBOX_FONT") {
            candidates.push(p.into());
        }
        for p in [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
            "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
            "/usr/share/fonts/noto/NotoSans-Regular.ttf",
            "/System/Library/Fonts/Supplemental/Arial.ttf",
            "/Library/Fonts/Arial.ttf",
            "C:\\Windows\\Fonts\\arial.ttf",
        ] {
            candidates.push(p.into());
        }
        for path in candidates {
            if let Ok(bytes) = std::fs::read(&path) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font(
                    "sans-serif",
                    plotters::style::FontStyle::Normal,
                    bytes,
                )
                .is_ok()
                {
                    return true;
                }
            }
        }
        false
    })
}

/// Something drawn on any plotters backend (a bitmap for PNG, SVG).
pub trait Figure {
    /// Draws the whole figure; `text` is false when no font was found (draw no text then:
    /// plotters fails on text without a font).
    fn draw<DB: DrawingBackend>(&self, backend: DB, text: bool) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static;
}

/// The extension of a plot file, `png` or `svg`; any other, or a folder that does not
/// exist, is an error naming the file (checked before a command writes anything).
pub fn plot_extension(path: &Path) -> Result<&'static str> {
    let ext = match path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .as_deref()
    {
        Some("png") => "png",
        Some("svg") => "svg",
        _ => {
            return Err(GlassboxError::Config(format!(
                "{}: a plot must be a .png or .svg file",
                path.display()
            )))
        }
    };
    if path.is_dir() {
        return Err(GlassboxError::Config(format!(
            "{}: is a folder; a plot must be a file",
            path.display()
        )));
    }
    let dir = crate::model::folder_of(path);
    if !dir.is_dir() {
        return Err(GlassboxError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the folder {} does not exist", dir.display()),
            ),
        ));
    }
    Ok(ext)
}

/// Draws `figure` to `path` (`.png` or `.svg`, by its extension) at `size` pixels, through a
/// temporary file in the same folder and a rename, so an error leaves no partial plot.
/// Returns [`NO_FONT_NOTE`] when the figure had to be drawn without text.
pub fn save(figure: &impl Figure, path: &Path, size: (u32, u32)) -> Result<Option<String>> {
    let staged = stage(figure, path, size)?;
    let note = staged.note.clone();
    staged.put_in_place()?;
    Ok(note)
}

/// A plot drawn to its temporary file and not yet in place ([`stage`]): a command that
/// writes several plots stages them all, then puts them in place, so that a plot that
/// fails leaves none of them written. Dropped without [`Staged::put_in_place`], its
/// temporary file is removed.
pub struct Staged {
    tmp: PathBuf,
    path: PathBuf,
    /// [`NO_FONT_NOTE`] when the figure was drawn without text.
    pub note: Option<String>,
}

impl Staged {
    /// Renames the drawn plot to its path.
    pub fn put_in_place(self) -> Result<()> {
        crate::model::put_in_place(&self.tmp, &self.path)
            .map_err(|e| GlassboxError::io(&self.path, e))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // After put_in_place the temporary file is gone; otherwise it is removed here.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Draws `figure` for `path` at `size` pixels into a temporary file in the same folder,
/// to be put in place by [`Staged::put_in_place`] (see [`save`]).
pub fn stage(figure: &impl Figure, path: &Path, size: (u32, u32)) -> Result<Staged> {
    let ext = plot_extension(path)?;
    let dir = crate::model::folder_of(path);
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // The temporary name keeps the extension: the bitmap backend picks its encoder by it;
    // a counter keeps two plots staged for one path (`a.png` and `./a.png`) apart.
    static STAGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = STAGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{stem}.tmp{}-{n}.{ext}", std::process::id()));
    let text = font_available();
    let staged = Staged {
        tmp,
        path: path.to_path_buf(),
        note: (!text).then(|| NO_FONT_NOTE.to_string()),
    };
    let drawn = if ext == "png" {
        figure.draw(BitMapBackend::new(&staged.tmp, size), text)
    } else {
        figure.draw(SVGBackend::new(&staged.tmp, size), text)
    };
    drawn.map_err(|e| GlassboxError::Config(format!("drawing {}: {e}", path.display())))?;
    Ok(staged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;

    /// A figure that fills its area, or fails as a drawing can.
    struct Filled(bool);

    impl Figure for Filled {
        fn draw<DB: DrawingBackend>(&self, backend: DB, _: bool) -> std::result::Result<(), String>
        where
            DB::ErrorType: 'static,
        {
            if !self.0 {
                return Err("the figure failed".to_string());
            }
            let area = backend.into_drawing_area();
            area.fill(&WHITE).map_err(|e| e.to_string())?;
            area.present().map_err(|e| e.to_string())
        }
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn staged_plots_are_written_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.png"), dir.path().join("b.svg"));
        // The second fails: the first, drawn already, is never put in place.
        let first = stage(&Filled(true), &a, (40, 30)).unwrap();
        assert_eq!(files(dir.path()).len(), 1, "its temporary file");
        let error = stage(&Filled(false), &b, (40, 30)).err().unwrap();
        assert!(error.to_string().contains("b.svg"), "{error}");
        drop(first);
        assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
        // Both drawn: both in place, no temporary file left.
        let staged = [
            stage(&Filled(true), &a, (40, 30)).unwrap(),
            stage(&Filled(true), &b, (40, 30)).unwrap(),
        ];
        for plot in staged {
            plot.put_in_place().unwrap();
        }
        assert_eq!(files(dir.path()), ["a.png", "b.svg"]);
    }
}

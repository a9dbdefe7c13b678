//! A PTX function or kernel entry under construction. Register declarations are collected apart
//! from instructions and rendered ahead of them, so an emitter declares a register where it
//! decides to use one and never edits text already written.
//!
//! A body is rendered as sections, each its declarations then its instructions: a function
//! loads its parameters in the first section and declares the registers of its body in the
//! next (see [`Func::section`]).

/// One section of a body: declarations, then instructions.
#[derive(Default)]
struct Section {
    decls: String,
    code: String,
}

/// A function or entry: its head (everything before the body's opening brace), then sections.
pub struct Func {
    head: String,
    sections: Vec<Section>,
}

impl Func {
    /// A function with head `head` (signature and directives, each line ending in a newline)
    /// and one open section.
    pub fn new(head: impl Into<String>) -> Func {
        Func {
            head: head.into(),
            sections: vec![Section::default()],
        }
    }

    fn current(&mut self) -> &mut Section {
        self.sections.last_mut().expect("a function has a section")
    }

    /// Declares something (a register, shared memory) in the current section, or comments on
    /// the declarations.
    pub fn decl(&mut self, d: impl AsRef<str>) {
        let s = self.current();
        s.decls.push('\t');
        s.decls.push_str(d.as_ref());
        s.decls.push('\n');
    }

    /// Appends an instruction to the current section.
    pub fn line(&mut self, s: impl AsRef<str>) {
        let c = &mut self.current().code;
        c.push('\t');
        c.push_str(s.as_ref());
        c.push('\n');
    }

    /// Appends a label to the current section.
    pub fn label(&mut self, l: impl AsRef<str>) {
        let c = &mut self.current().code;
        c.push_str(l.as_ref());
        c.push_str(":\n");
    }

    /// Opens a new section: declarations from here on are rendered after the instructions so
    /// far.
    pub fn section(&mut self) {
        self.sections.push(Section::default());
    }

    /// The function's text.
    pub fn render(&self) -> String {
        let mut out = self.head.clone();
        out.push_str("{\n");
        for s in &self.sections {
            out.push_str(&s.decls);
            out.push_str(&s.code);
        }
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_come_before_the_instructions_of_their_section() {
        let mut f = Func::new(".func f()\n");
        f.line("ld.param.b32 %a, [p];");
        f.decl(".reg .b32 %a;");
        f.section();
        f.label("L");
        f.line("ret;");
        f.decl(".reg .b32 %b;");
        assert_eq!(
            f.render(),
            ".func f()\n{\n\t.reg .b32 %a;\n\tld.param.b32 %a, [p];\n\t.reg .b32 %b;\nL:\n\tret;\n}\n"
        );
    }
}

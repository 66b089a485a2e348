package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

// file adds the exported declarations of one file.
func (l *lister) file(f *ast.File) error {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			l.funcDecl(d)
		case *ast.GenDecl:
			if err := l.genDecl(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// funcDecl adds an exported function, or an exported method of an
// exported type.
func (l *lister) funcDecl(d *ast.FuncDecl) {
	if !d.Name.IsExported() {
		return
	}
	if d.Recv == nil {
		l.names++
		l.add("func " + d.Name.Name + l.typeParams(d.Type.TypeParams) + l.signature(d.Type))
		return
	}
	recv := d.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
	}
	switch r := recv.(type) {
	case *ast.IndexExpr:
		recv = r.X
	case *ast.IndexListExpr:
		recv = r.X
	}
	base, ok := recv.(*ast.Ident)
	if !ok || !base.IsExported() {
		return
	}
	l.names++
	l.add(fmt.Sprintf("method (%s%s) %s%s", star, base.Name, d.Name.Name, l.signature(d.Type)))
}

// genDecl adds the exported constants, variables and types of a
// declaration.
func (l *lister) genDecl(d *ast.GenDecl) error {
	var lastType ast.Expr // a const block's implicit type and values
	var lastValues []ast.Expr
	for iota, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.ValueSpec:
			if d.Tok == token.CONST && s.Type == nil && s.Values == nil {
				s = &ast.ValueSpec{Names: s.Names, Type: lastType, Values: lastValues}
			} else if d.Tok == token.CONST {
				lastType, lastValues = s.Type, s.Values
			}
			if err := l.valueSpec(d.Tok, s, iota); err != nil {
				return err
			}
		case *ast.TypeSpec:
			l.typeSpec(s)
		}
	}
	return nil
}

// valueSpec adds exported constants or variables: their type when
// written, and their value as written (for a constant, which is part of
// the contract, with the value of iota where it uses it), or the type of
// a variable's value.
func (l *lister) valueSpec(tok token.Token, s *ast.ValueSpec, iota int) error {
	for i, n := range s.Names {
		if !n.IsExported() {
			continue
		}
		l.names++
		line := tok.String() + " " + n.Name
		if s.Type != nil {
			line += " " + l.expr(s.Type)
		}
		var value ast.Expr
		if i < len(s.Values) {
			value = s.Values[i]
		}
		switch {
		case tok == token.CONST && value != nil:
			line += " = " + l.expr(value)
			if usesIota(value) {
				line += fmt.Sprintf(" (iota %d)", iota)
			}
		case s.Type == nil && value != nil:
			t, ok := l.typeOf(value)
			if !ok {
				return fmt.Errorf("%s: cannot tell the type of var %s from its value; give it a type", l.fset.Position(n.Pos()), n.Name)
			}
			line += " " + t
		}
		l.add(line)
	}
	return nil
}

// typeOf returns the type of a variable's initial value, for the values
// whose type the syntax says: a composite literal, its address, and
// errors.New or fmt.Errorf.
func (l *lister) typeOf(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.CompositeLit:
		return l.expr(e.Type), e.Type != nil
	case *ast.UnaryExpr:
		if c, ok := e.X.(*ast.CompositeLit); ok && e.Op == token.AND && c.Type != nil {
			return "*" + l.expr(c.Type), true
		}
	case *ast.CallExpr:
		if f := l.expr(e.Fun); f == "errors.New" || f == "fmt.Errorf" {
			return "error", true
		}
	}
	return "", false
}

// typeSpec adds an exported type, and its exported fields or interface
// methods, one line each.
func (l *lister) typeSpec(s *ast.TypeSpec) {
	if !s.Name.IsExported() {
		return
	}
	l.names++
	head := "type " + s.Name.Name + l.typeParams(s.TypeParams)
	if s.Assign.IsValid() {
		l.add(head + " = " + l.expr(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		l.add(head + " struct")
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				if name := embeddedName(f.Type); ast.IsExported(name) {
					l.add(head + " struct, embedded " + l.expr(f.Type))
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					l.add(head + " struct, " + n.Name + " " + l.expr(f.Type))
				}
			}
		}
	case *ast.InterfaceType:
		var methods []string
		for _, m := range t.Methods.List {
			for _, n := range m.Names {
				if !n.IsExported() {
					methods = append(methods, "unexported methods")
					continue
				}
				methods = append(methods, n.Name)
				l.add(head + " interface, " + n.Name + l.signature(m.Type.(*ast.FuncType)))
			}
			if len(m.Names) == 0 {
				methods = append(methods, "embedded "+l.expr(m.Type))
				l.add(head + " interface, embedded " + l.expr(m.Type))
			}
		}
		l.add(head + " interface { " + strings.Join(dedupe(methods), ", ") + " }")
	default:
		l.add(head + " " + l.expr(s.Type))
	}
}

// embeddedName returns the name of an embedded field's type.
func embeddedName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// dedupe drops repeats of a sorted-or-not list, keeping the first.
func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// typeParams prints a list of type parameters, "" for none.
func (l *lister) typeParams(tp *ast.FieldList) string {
	if tp == nil || len(tp.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range tp.List {
		names := make([]string, len(f.Names))
		for i, n := range f.Names {
			names[i] = n.Name
		}
		parts = append(parts, strings.Join(names, ", ")+" "+l.expr(f.Type))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature prints a function type's parameters and results, without
// their names, as Go's api files do.
func (l *lister) signature(t *ast.FuncType) string {
	params := "(" + strings.Join(l.types(t.Params), ", ") + ")"
	results := l.types(t.Results)
	switch len(results) {
	case 0:
		return params
	case 1:
		return params + " " + results[0]
	}
	return params + " (" + strings.Join(results, ", ") + ")"
}

// types lists the types of a field list, one per name.
func (l *lister) types(fields *ast.FieldList) []string {
	if fields == nil {
		return nil
	}
	var out []string
	for _, f := range fields.List {
		t := l.expr(f.Type)
		for range max(1, len(f.Names)) {
			out = append(out, t)
		}
	}
	return out
}

// usesIota reports whether a constant's value mentions iota.
func usesIota(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "iota" {
			found = true
		}
		return !found
	})
	return found
}

"""PDF rendering with fpdf2 (pure Python): every body of a batch, parties, lines, VAT, payments, Allegati."""

from __future__ import annotations

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from varco.rendering.document import BodyView, InvoiceDocument, PartyView

# The FatturaPA XSD restricts strings to Basic Latin + Latin-1 Supplement, which the core fonts cover;
# anything else (a hand-edited file) is replaced rather than failing the whole rendering.
FONT = "Helvetica"


def _safe(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("\u20ac", "EUR").encode("latin-1", "replace").decode("latin-1")


class _Pdf(FPDF):
    title_text = ""

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font(FONT, size=7)
        self.cell(0, 5, _safe(f"{self.title_text}  -  pagina {self.page_no()}/{{nb}}"), align="C")


def _heading(pdf: FPDF, text: str, size: int = 11) -> None:
    pdf.set_font(FONT, "B", size)
    pdf.cell(0, 7, _safe(text), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font(FONT, size=8)


def _party(pdf: FPDF, party: PartyView, label: str, x: float, y: float, width: float) -> float:
    pdf.set_xy(x, y)
    pdf.set_font(FONT, "B", 8)
    pdf.cell(width, 5, _safe(label), new_x=XPos.LEFT, new_y=YPos.NEXT)
    pdf.set_font(FONT, size=8)
    rows = [party.name]
    if party.vat:
        rows.append(f"P.IVA / VAT {party.vat}")
    if party.fiscal_code:
        rows.append(f"C.F. {party.fiscal_code}")
    if party.address:
        rows.append(party.address)
    if party.regime:
        rows.append(f"Regime fiscale {party.regime}")
    for row in rows:
        pdf.set_x(x)
        pdf.multi_cell(width, 4, _safe(row), new_x=XPos.LEFT, new_y=YPos.NEXT)
    return pdf.get_y()


def _table(
    pdf: FPDF, headings: tuple[str, ...], rows: list[tuple[object, ...]], widths: tuple[int, ...]
) -> None:
    pdf.set_font(FONT, size=7.5)
    with pdf.table(
        col_widths=widths, text_align="LEFT", line_height=4.5, first_row_as_headings=True
    ) as table:
        table.row([_safe(h) for h in headings])
        for values in rows:
            table.row([_safe(v) for v in values])
    pdf.ln(2)


def _body(pdf: FPDF, body: BodyView, count: int) -> None:
    label = f"Documento {body.position}/{count}" if count > 1 else "Documento"
    _heading(pdf, f"{label}: {body.document_type or ''} n. {body.number or ''} del {body.date or ''}")
    if body.total:
        pdf.cell(
            0,
            5,
            _safe(f"Totale documento: {body.total} {body.currency or ''}"),
            new_x=XPos.LMARGIN,
            new_y=YPos.NEXT,
        )
    for causale in body.causale:
        pdf.multi_cell(0, 4, _safe(f"Causale: {causale}"), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    if body.lines:
        _table(
            pdf,
            ("N.", "Descrizione", "Quantita", "Prezzo unitario", "Totale", "IVA %", "Natura"),
            [
                (x.number, x.description, x.quantity, x.unit_price, x.total, x.vat_rate, x.natura)
                for x in body.lines
            ],
            (8, 70, 18, 24, 24, 14, 16),
        )
    if body.more_lines:
        note = f"... e altre {body.more_lines} righe: vedere il file XML"
        pdf.multi_cell(0, 4, _safe(note), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    if body.vat:
        _heading(pdf, "Riepilogo IVA", 9)
        _table(
            pdf,
            ("Aliquota %", "Natura", "Imponibile", "Imposta", "Esigibilita"),
            [(v.rate, v.natura, v.taxable, v.tax, v.esigibilita) for v in body.vat],
            (25, 25, 40, 40, 30),
        )
    if body.payments:
        _heading(pdf, "Pagamento", 9)
        _table(
            pdf,
            ("Condizioni", "Modalita", "Importo", "Scadenza", "IBAN", "Istituto"),
            [(p.conditions, p.method, p.amount, p.due_date, p.iban, p.bank) for p in body.payments],
            (20, 20, 25, 25, 55, 30),
        )
    if body.attachments:
        _heading(pdf, "Allegati", 9)
        _table(
            pdf,
            ("N.", "Nome", "Formato", "Descrizione", "Dimensione"),
            [(a.index, a.name, a.format, a.description, f"{len(a.content)} byte") for a in body.attachments],
            (8, 60, 20, 70, 20),
        )


def render_pdf(document: InvoiceDocument, filename: str) -> bytes:
    """The PDF of an invoice file: a header with both parties, then each body of the batch."""
    pdf = _Pdf(format="A4")
    pdf.title_text = filename
    pdf.set_title(_safe(filename))
    pdf.set_creator("varco")
    pdf.alias_nb_pages()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font(FONT, "B", 14)
    pdf.cell(0, 8, _safe(f"Fattura elettronica {document.format or ''}"), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font(FONT, size=8)
    meta = f"File {filename}"
    if document.recipient_code:
        meta += f"  -  Codice destinatario {document.recipient_code}"
    if document.recipient_pec:
        meta += f"  -  PEC {document.recipient_pec}"
    pdf.multi_cell(0, 4, _safe(meta), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(2)
    top, half = pdf.get_y(), (pdf.w - pdf.l_margin - pdf.r_margin) / 2
    left = _party(pdf, document.supplier, "Cedente / prestatore (fornitore)", pdf.l_margin, top, half - 4)
    right = _party(
        pdf, document.customer, "Cessionario / committente (cliente)", pdf.l_margin + half, top, half
    )
    pdf.set_xy(pdf.l_margin, max(left, right) + 4)
    for body in document.bodies:
        _body(pdf, body, len(document.bodies))
    return bytes(pdf.output())

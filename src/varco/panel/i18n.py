"""Italian and English text of the panel: English strings are the keys, Italian the translation."""

from __future__ import annotations

from collections.abc import Callable

LANGUAGES = ("it", "en")
DEFAULT_LANGUAGE = "it"  # the contract's users are Italian taxpayers

ITALIAN: dict[str, str] = {
    "Sign in": "Accedi",
    "Sign out": "Esci",
    "Username": "Nome utente",
    "Password": "Password",
    "Wrong username or password, or the account may not sign in": (
        "Nome utente o password errati, oppure l'utente non può accedere"
    ),
    "The form expired: please try again": "Il modulo è scaduto: riprova",
    "Complete your registration": "Completa la registrazione",
    "I accept the terms of service": "Accetto le condizioni del servizio",
    "Reference e-mail or PEC": "E-mail o PEC di riferimento",
    "Repeat the new password": "Ripeti la nuova password",
    "Password (new, or your current one)": "Password (nuova, oppure quella attuale)",
    "Choosing a new password revokes every API token issued with the old one: programs signed in "
    "with POST /auth/signin must sign in again. Typing your current password again keeps them working.": (
        "Scegliere una nuova password revoca tutti i token API emessi con quella precedente: i programmi "
        "che hanno fatto l'accesso con POST /auth/signin devono accedere di nuovo. Digitare di nuovo la "
        "password attuale li mantiene validi."
    ),
    "Save": "Salva",
    "You must accept the terms of service": "Devi accettare le condizioni del servizio",
    "The two passwords differ": "Le due password sono diverse",
    "The new password must have at least 10 characters": "La nuova password deve avere almeno 10 caratteri",
    "Invalid e-mail address": "Indirizzo e-mail non valido",
    "Sent invoices": "Fatture inviate",
    "Received invoices": "Fatture ricevute",
    "Upload": "Carica",
    "Settings": "Impostazioni",
    "Delegations": "Deleghe",
    "Usage": "Consumi",
    "Sessions and tokens": "Sessioni e token",
    "Administration": "Amministrazione",
    "Language": "Lingua",
    "File name": "Nome file",
    "SDI id": "Id SDI",
    "Sender": "Mittente",
    "Receiver": "Destinatario",
    "Number": "Numero",
    "Date": "Data",
    "Status": "Stato",
    "Total": "Totale",
    "Created": "Creata",
    "Filter": "Filtra",
    "From": "Dal",
    "To": "Al",
    "VAT number": "Partita IVA",
    "No invoices": "Nessuna fattura",
    "Page": "Pagina",
    "of": "di",
    "Previous": "Precedente",
    "Next": "Successiva",
    "State history": "Storico degli stati",
    "Notifications": "Notifiche",
    "SDI errors": "Errori SDI",
    "Downloads": "Download",
    "Customer outcome": "Esito committente",
    "Accept (EC01)": "Accetta (EC01)",
    "Refuse (EC02)": "Rifiuta (EC02)",
    "Reason (required to refuse)": "Motivo (obbligatorio per rifiutare)",
    "Send outcome": "Invia esito",
    "Outcome sent": "Esito inviato",
    "Invoice file": "File fattura",
    "Validate only (dry run)": "Solo verifica (prova)",
    "Send to SDI": "Invia allo SDI",
    "Drop an invoice file here or choose it": "Trascina qui un file fattura o sceglilo",
    "Validation report": "Rapporto di validazione",
    "The file passes the upload checks; it would be named": (
        "Il file supera i controlli di caricamento; verrebbe chiamato"
    ),
    "Accepted: the file was stored as": "Accettato: il file è stato registrato come",
    "Refused": "Rifiutato",
    "No findings": "Nessuna segnalazione",
    "Code": "Codice",
    "Message": "Messaggio",
    "Hint": "Suggerimento",
    "Event": "Evento",
    "Year": "Anno",
    "Value": "Valore",
    "Delay": "Ritardo",
    "Invoice": "Fattura",
    "Panel sessions": "Sessioni del pannello",
    "Where": "Dove",
    "E-mail receipt of received invoices": "Ricezione via e-mail delle fatture ricevute",
    "Send received invoices by e-mail": "Invia via e-mail le fatture ricevute",
    "Exchange System controls at upload": "Controlli del Sistema di Interscambio al caricamento",
    "Refuse at upload what the Exchange System would refuse (e.g. 00423, 00404)": (
        "Rifiuta al caricamento ciò che il Sistema di Interscambio scarterebbe (es. 00423, 00404)"
    ),
    "Address": "Indirizzo",
    "Saved": "Salvato",
    "Request a mandate from a Premium user": "Chiedi una delega a un utente Premium",
    "Premium username": "Nome utente Premium",
    "Request": "Richiedi",
    "Delegator": "Delegante",
    "Delegate": "Delegato",
    "Approve": "Approva",
    "Suspend": "Sospendi",
    "Revoke": "Revoca",
    "Resume": "Riattiva",
    # delegation states, in the "Stato" column ("Active" is with the token states)
    "Suspended": "Sospeso",
    "Inactive": "Non attivo",
    "Awaiting approval": "In attesa di approvazione",
    "Reactivate": "Riattiva",
    "Assignors": "Cedenti",
    "Tier": "Fascia",
    "Transmissions this year": "Trasmissioni quest'anno",
    "Annual limit": "Limite annuale",
    "Storage used": "Spazio usato",
    "Storage purchased": "Spazio acquistato",
    "Kind": "Tipo",
    "Issued": "Emesso",
    "Expires": "Scade",
    "Revoked": "Revocato",
    "Active": "Attivo",
    "Expired": "Scaduto",
    "This browser": "Questo browser",
    "Revoke all API tokens": "Revoca tutti i token API",
    "Accounts": "Utenti",
    "Locks": "Blocchi",
    "Unlock": "Sblocca",
    "SDI simulator scenarios": "Scenari del simulatore SDI",
    "Outcome": "Esito",
    "Recipient code": "Codice destinatario",
    "Default rule": "Regola predefinita",
    "Set scenario": "Imposta scenario",
    "E-mail outbox": "Posta in uscita",
    "Subject": "Oggetto",
    "Delivered": "Consegnata",
    "Pending": "In attesa",
    "Disabled": "Disabilitato",
    "Operators only": "Solo per gli operatori",
    "Not found": "Non trovato",
    "Invoice rendering": "Visualizzazione della fattura",
    "Electronic invoice": "Fattura elettronica",
    "Supplier": "Cedente/prestatore",
    "Customer": "Cessionario/committente",
    "Tax code": "Codice fiscale",
    "Document": "Documento",
    "no.": "n.",
    "Document total": "Totale documento",
    "Lines": "Righe",
    "and %d more lines: see the XML file": "e altre %d righe: vedere il file XML",
    "No.": "N.",
    "Description": "Descrizione",
    "Quantity": "Quantità",
    "Unit price": "Prezzo unitario",
    "VAT %": "IVA %",
    "VAT summary": "Riepilogo IVA",
    "Rate %": "Aliquota %",
    "Taxable": "Imponibile",
    "Tax": "Imposta",
    "Chargeability": "Esigibilità",
    "Payment": "Pagamento",
    "Terms": "Condizioni",
    "Method": "Modalità",
    "Amount": "Importo",
    "Due date": "Scadenza",
    "Bank": "Istituto",
    "Attachments": "Allegati",
    "bytes": "byte",
    "Skip to content": "Vai al contenuto",
    # callbacks (pages_callbacks.py)
    "Callbacks": "Callback",
    "varco sends your events to these URLs, signed with the endpoint's secret (Varco-Signature header). "
    "Every event also stays in the event feed, GET /api/v2/events.": (
        "varco invia i tuoi eventi a questi URL, firmati con il segreto dell'endpoint (intestazione "
        "Varco-Signature). Ogni evento resta anche nel flusso degli eventi, GET /api/v2/events."
    ),
    "Your endpoints": "I tuoi endpoint",
    "Events": "Eventi",
    "Last delivery": "Ultimo invio",
    "No endpoints yet": "Nessun endpoint",
    "New endpoint": "Nuovo endpoint",
    "https only, and the host must resolve to public addresses.": (
        "Solo https, e l'host deve risolversi in indirizzi pubblici."
    ),
    "http or https (demo: localhost is allowed too).": "http o https (demo: anche localhost).",
    "None checked: every kind.": "Nessuna selezionata: tutti i tipi.",
    "a received invoice arrived": "è arrivata una fattura ricevuta",
    "a sent invoice changed state": "una fattura inviata ha cambiato stato",
    "the transmissions counter changed": "il contatore delle trasmissioni è cambiato",
    "one of your endpoints was disabled": "uno dei tuoi endpoint è stato disabilitato",
    "Create endpoint": "Crea endpoint",
    "Endpoint created": "Endpoint creato",
    "Endpoint deleted": "Endpoint eliminato",
    "Signing secret": "Segreto di firma",
    "Secret of endpoint": "Segreto dell'endpoint",
    "Copy it now: it will not be shown again.": "Copialo ora: non verrà più mostrato.",
    "Your receiver uses it to check the Varco-Signature header of every delivery. If it is lost, "
    "replace it from the endpoint page or with POST /api/v2/callbacks/{id}/secret.": (
        "Il tuo ricevitore lo usa per verificare l'intestazione Varco-Signature di ogni invio. Se lo "
        "perdi, sostituiscilo dalla pagina dell'endpoint o con POST /api/v2/callbacks/{id}/secret."
    ),
    "New signing secret": "Nuovo segreto di firma",
    "Secret replaced": "Segreto sostituito",
    "Replace the secret…": "Sostituisci il segreto…",
    "Replace the secret": "Sostituisci il segreto",
    "Replace the signing secret": "Sostituisci il segreto di firma",
    "current secret": "segreto attuale",
    "Replace the secret of this endpoint? Deliveries are signed with the new secret from now on: your "
    "receiver refuses them until it has the new one. The new secret is shown once.": (
        "Sostituire il segreto di questo endpoint? Da ora gli invii sono firmati con il nuovo segreto: il "
        "tuo ricevitore li rifiuta finché non lo riceve. Il nuovo segreto viene mostrato una sola volta."
    ),
    "Open the endpoint": "Apri l'endpoint",
    "Back to callbacks": "Torna ai callback",
    "Callback endpoint": "Endpoint di callback",
    "Secret": "Segreto",
    "Actions": "Azioni",
    "Send test event": "Invia evento di prova",
    "Enable again": "Riattiva",
    "Delete…": "Elimina…",
    "Delete": "Elimina",
    "Cancel": "Annulla",
    "Enabled again: it receives the events recorded from now on.": (
        "Riattivato: riceve gli eventi registrati da ora in poi."
    ),
    "Disabled: a delivery kept failing for the whole retry window (a day by default). Check the fix "
    "with a test event, then enable it: it receives the events recorded from then on; the missed ones "
    "are in the event feed.": (
        "Disabilitato: un invio è fallito per tutto il periodo di ritentativi (un giorno, salvo diversa "
        "configurazione). Verifica la correzione con un evento di prova, poi "
        "riattivalo: riceve gli eventi registrati da quel momento; quelli persi sono nel flusso degli eventi."
    ),
    "Recent deliveries": "Invii recenti",
    "Test event": "Evento di prova",
    "delivered": "consegnato",
    "queued, waiting for the worker": "in coda, in attesa dell'invio",
    "not delivered": "non consegnato",
    "Event id": "Id evento",
    "Type": "Tipo",
    "Attempts": "Tentativi",
    "Last error": "Ultimo errore",
    "next attempt": "prossimo tentativo",
    "No deliveries yet": "Nessun invio",
    "Refresh": "Aggiorna",
    "Failed": "Non riuscita",
    "Cancelled": "Annullata",
    "Delete callback endpoint": "Elimina l'endpoint di callback",
    "Delete this endpoint? Nothing more will be sent to it and its waiting deliveries are cancelled. "
    "This cannot be undone.": (
        "Eliminare questo endpoint? Non gli verrà inviato più nulla e gli invii in attesa saranno "
        "annullati. L'operazione non si può annullare."
    ),
    # audit trail (pages_admin.py)
    "Audit trail": "Registro di controllo",
    "sign-ins, tokens, passwords, accounts, delegations, callbacks, simulator controls": (
        "accessi, token, password, utenti, deleghe, callback, comandi del simulatore"
    ),
    "Security and administrative events, newest first. Never a password, token or secret.": (
        "Eventi di sicurezza e di amministrazione, dal più recente. Mai una password, un token o un segreto."
    ),
    "Event kind": "Tipo di evento",
    "IP address": "Indirizzo IP",
    "When": "Quando",
    "By": "Da",
    "Account": "Utente",
    "Details": "Dettagli",
    "not signed in": "non autenticato",
    "No events": "Nessun evento",
    "Request id": "Id richiesta",
}


def translator(language: str) -> Callable[[str], str]:
    """A function from English text to the language's text (English, or the key if untranslated)."""
    if language == "it":
        return lambda text: ITALIAN.get(text, text)
    return lambda text: text


def pick_language(cookie: str | None, accept_language: str | None) -> str:
    """The cookie's choice, else the browser's first supported language, else Italian."""
    if cookie in LANGUAGES:
        return cookie
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return DEFAULT_LANGUAGE

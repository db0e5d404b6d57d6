//! 日本語の文言。状態・要約・ヒントはユーザーの以前の Butler の言い回しに合わせる。ツール名・
//! 引数名・フィールド名は英語のまま。

use super::Key;

pub(super) fn text(key: Key) -> &'static str {
    match key {
        Key::Instructions => "\
開始: work_session_start の後に work_observe (迷ったらまた)。シェルの git はブロックされます。\
ほかのツールにない操作は work_vcs(args)。",
        Key::ClaudeBlock => "\
## Butler
このプロジェクトのバージョン管理はシェルではなく Butler の MCP ツールで行います。
- `work_session_start` で始め、`work_observe()` で作業の現在地を確認してください。
- Bash で `git` を実行しないでください (フックがブロックします)。`work_diff`、`work_history`、\
`work_record`、`work_publish` を使い、その他の git 操作には `work_vcs([\"branch\", \"-a\"])` のように \
`work_vcs` を使ってください。",
        Key::UninitSummary => {
            "セッションが初期化されていません。work_session_start(project_root) を呼んでください"
        }
        Key::UninitReason => "セッションが初期化されていません",
        Key::UnknownSummary => "作業状態を特定できません: {why}。",
        Key::UnknownUnreadable => "プロジェクトを読み取れませんでした",
        Key::BlockedSummary => "ブロック中: {what}。{hint}。",
        Key::DirtySummary => "未記録の変更が {n} 件あります{linked}。work_record で記録してください",
        Key::DirtyLinked => " (#{issue} に紐付け)",
        Key::DirtyReason => "未記録の変更があります",
        Key::DirtyNoIssueHint => {
            "active issue がありません。紐付けるなら issue_ids に指定してください"
        }
        Key::DirtyUnpublishedSummary => {
            "未記録の変更が {n} 件、未公開の記録が {unpublished} 件あります。先に work_record で記録し、次に work_publish してください"
        }
        Key::UnpublishedSummary => {
            "未公開の記録が {n} 件あります。work_publish で共有先に反映してください"
        }
        Key::UnpublishedReason => "未公開の記録があります",
        Key::DoneSharedReason => "#{issue} の作業は記録・公開済みです",
        Key::DoneLocalReason => "#{issue} の作業は記録済みです (共有先は設定されていません)",
        Key::DoneSummary => "{reason}。work_finish で締め処理を行ってください",
        Key::IdleSummary => "作業中の変更はありません",
        Key::OutsideRecords => {
            " 前回の確認以降に Butler の外で {n} 件の記録が作られました。recent_records を見てください。"
        }
        Key::IssueMissingNote => "issue #{issue} が issue トラッカーに見つかりません。",
        Key::TrackerSilentNote => {
            "issue トラッカーが応答しませんでした。active issue のタイトルは不明です。"
        }
        Key::BlockInProgress => "{what} が進行中です",
        Key::BlockConflicts => "{n} 件のファイルに未解決の競合があります",
        Key::BlockDetached => "作業が名前のある作業ライン上にありません",
        Key::BlockInProgressHint => {
            "work_vcs で完了または中止してください (例: work_vcs([\"merge\", \"--abort\"]))。その後 work_observe を呼んでください"
        }
        Key::BlockConflictsHint => {
            "競合したファイルを解決し (work_observe の changed_files 参照)、work_record を呼んでください"
        }
        Key::BlockDetachedHint => {
            "work_switch_line(name=…) で作業ラインに切り替えるか、work_new_line(name=…) でここから始めてください"
        }
        Key::SessionStarted => {
            "セッションを初期化しました: {repo}。次は work_observe。"
        }
        Key::SessionUntrustedConfig => {
            "プロジェクトの {file} は信頼されていないため、何を実行しどこへ接続できるかを決める設定を無視しました ({settings})。ユーザーに伝えてください。その設定を使う場合は、ユーザーがファイルを確認して `{command}` を実行し、その後 work_session_start をもう一度呼んでください。"
        }
        Key::BackendConfigured => "{repo} の {kind} issue{version} (設定による)",
        Key::BackendDetected => "{repo} の {kind} issue{version} (検出)",
        Key::BackendVersion => " (バージョン {version})",
        Key::BackendNoToken => "内蔵の issue ストア (`{variable}` が未設定)",
        Key::BackendNoRemote => "内蔵の issue ストア (リモートのトラッカーが見つかりません)",
        Key::BackendNotGitea => "内蔵の issue ストア (リモートのホストが Gitea として応答しません)",
        Key::BackendTokenNotBound => {
            "内蔵の issue ストア (トラッカーのトークンは {host} に結び付けられていません。そのトラッカーを使うには、ユーザーが `{variable}` に追加します)"
        }
        Key::StartLinked => "#{issue} の作業を開始しました。work_record は既定でこの issue に紐付けます。",
        Key::StartUnlinked => "active issue はありません。記録は既定では issue に紐付けられません。",
        Key::StartUncheckedNote => {
            "issue トラッカーが応答しなかったため、issue を確認せずに設定しました。"
        }
        Key::Recorded => "{id} として記録しました。",
        Key::NothingRecorded => "記録するものはありません。",
        Key::Published => "{n} 件の記録を {destination} に共有しました。",
        Key::NothingPublished => "公開済みです。共有するものはありません。",
        Key::FinishBlocked => "作業はブロックされています: {what}。",
        Key::FinishUnrecorded => "未記録の作業が残っています。先に記録してください。",
        Key::FinishUnrecordedReason => "未記録の変更 {n} 件",
        Key::FinishNoDestination => {
            "共有先 (upstream) が設定されていないため、公開状態を確認できません。"
        }
        Key::FinishNoDestinationHint => {
            "ユーザーに共有先を尋ね、work_vcs([\"remote\", \"add\", \"origin\", \"<url>\"]) で追加してください"
        }
        Key::FinishUnshared => "記録済みの作業がまだ共有されていません。",
        Key::FinishUnsharedReason => "未公開の記録 {n} 件",
        Key::FinishNoIssue => "作業は記録・公開済みです。閉じる active issue はありません。",
        Key::FinishCommentReason => "作業要約を issue #{issue} に残すことを推奨します",
        Key::FinishCloseReason => "完了条件を満たしていそうです。issue #{issue} を閉じますか？",
        Key::FinishProposals => "作業は記録・公開済みです。以下を確認してください",
        Key::FinishOptionsNeedAuto => "message・comment・close は auto=true のときだけ使えます",
        Key::ErrNoSession => "セッションが開始されていません",
        Key::ErrNoSessionHint => "先に work_session_start(project_root) を呼んでください",
        Key::ErrInvalidArgument => "`{field}` が不正です: {reason}",
        Key::ErrInvalidArgumentHint => "正しい `{field}` を指定して {tool} をもう一度呼んでください",
        Key::ErrUnrecorded => "未記録の変更があるため共有できません",
        Key::ErrUnrecordedHint => "先に work_record で作業を記録し、それから work_publish を呼んでください",
        Key::ErrBlocked => "プロジェクトはブロックされています: {what}",
        Key::ErrNoDestination => {
            "共有先 (upstream) が設定されていないため、公開状態を確認できません"
        }
        Key::ErrNoDestinationHint => {
            "ユーザーに共有先を尋ね、work_vcs([\"remote\", \"add\", \"origin\", \"<url>\"]) で追加してください"
        }
        Key::ErrMessageNeeded => "message がありません。変更内容から案を作りました",
        Key::ErrMessageNeededHint => {
            "message に data.proposed_message か自分の言葉を入れて work_record をもう一度呼んでください"
        }
        Key::ErrNothingToRecord => "記録するものがありません",
        Key::ErrNothingToRecordHint => {
            "先に変更を加えてから work_record を呼んでください。状態は work_observe で確認できます"
        }
        Key::ErrRejected => "共有先に、ここにはまだない作業があります",
        Key::ErrRejectedHint => "work_vcs([\"pull\", \"--rebase\"]) で取り込んでください。競合で止まったら、競合したファイルを編集して work_record で続け、その後 work_publish をもう一度呼んでください",
        Key::ErrInvalidBody => "issue の本文形式が不足しています",
        Key::ErrInvalidBodyHint => {
            "`## Current state`、`## Next action`、`## Blockers` の節を含む本文で {tool} をもう一度呼んでください"
        }
        Key::ErrInternal => "Butler で内部エラーが発生しました",
        Key::ObserveHint => "work_observe で現在の状態を確認してください",
        Key::ErrRecordNotFound => "記録 `{id}` はありません",
        Key::FindRecordsHint => "記録 id は work_history で探してください",
        Key::ErrUseProperTool => "`{subcommand}` には専用の Butler ツールがあります",
        Key::ErrUseProperToolHint => "代わりに {suggestion} を使ってください",
        Key::ErrLineNotFound => "作業ライン `{name}` はありません",
        Key::ErrLineNotFoundHint => "data.lines から選ぶか、work_new_line(name={quoted}) で始めてください",
        Key::ErrLineExists => "作業ライン `{name}` はすでにあります",
        Key::ErrLineExistsHint => "work_switch_line(name={quoted}) で切り替えるか、別の名前で work_new_line を呼んでください",
        Key::ErrLineShadowsShared => "作業ライン `{name}` はリモート `{remote}` の共有ラインと読み違えられます",
        Key::ErrLineNameHint => "リモート名と `/` で始まらない名前で work_new_line を呼んでください",
        Key::ErrLineLooksLike => "`{name}` は作業ライン `{existing}` と見分けられません（大文字小文字か似た文字の違いだけです）",
        Key::ErrLineLooksLikeHint => "work_switch_line(name={quoted}) で切り替えるか、見て区別できる名前で work_new_line を呼んでください",
        Key::ErrLineAmbiguous => "`{name}` はローカルの作業ラインと共有ライン `{name}` の両方を指します。Butler はどちらかを選びません",
        Key::ErrLineAmbiguousHint => "work_vcs([\"branch\", \"-m\", {quoted}, \"<新しい名前>\"]) でローカルの作業ラインの名前を変えてから、もう一度呼んでください",
        Key::ErrLineNeeded => "この作業ラインの元のラインが分かりません",
        Key::ErrLineNeededHint => "取り込むラインを指定して work_merge_line(name=…) を呼んでください (data.lines 参照)",
        Key::ErrLineNeedsRecord => "未記録の変更が {n} 件あります ({names})。作業ラインを変える前に記録してください",
        Key::ErrLineNeedsRecordHint => "work_record で記録し (扱いが分からなければユーザーに尋ね)、{tool} をもう一度呼んでください",
        Key::ErrMergeConflicted => "`{from}` の取り込みが {n} 件のファイルの競合で止まりました。解決するまでプロジェクトはブロックされます",
        Key::ErrMergeConflictedHint => "ファイルを編集して競合を解決し、work_record で記録してください{again}。やめる場合は work_vcs([\"merge\", \"--abort\"])",
        Key::ErrMergeAgainTask => "。その後 task_accept をもう一度呼ぶとタスクが閉じます",
        Key::ErrFinishStopped => "work_finish は `{step}` で止まりました{after}。中途半端な状態は残っていません",
        Key::ErrFinishDone => " (完了: {steps})",
        Key::ErrTaskNeedsRecord => "未記録の変更が {n} 件あります ({names})。タスクは記録から始まります",
        Key::ErrTaskToolConfig => "まだ取り込んでいません: タスク {task} はツールを設定する、またはコードを実行するファイルを {n} 件変更しています ({names})",
        Key::ErrTaskToolConfigHint => "タスクが変えたこれらのファイルをユーザーに見せ (証跡にある記録を work_diff(record_id=…) で)、確認が済んだら confirm_paths=[…] にそれらを挙げて task_accept(task_id=\"{task}\") を呼ぶか、task_discard してください",
        Key::TaskToolConfigNote => " 変更されたファイルのうち {n} 件はツールを設定する、またはコードを実行するファイルです ({names})。task_accept で確認を求めます。",
        Key::ErrTaskNeedsRecordHint => "work_record で記録し (扱いが分からなければユーザーに尋ね)、run_implement をもう一度呼んでください",
        Key::ErrTaskNotFound => "開いているタスク `{id}` はありません",
        Key::ErrTaskNotFoundHint => "タスク id は run_implement の応答にあります",
        Key::ErrNotARepository => "そのディレクトリは git プロジェクトの中にありません",
        Key::ErrNotARepositoryHint => "プロジェクトのルートディレクトリで work_session_start を呼んでください",
        Key::ErrNoIdentity => "作者の名前とメールアドレスが設定されていないため、記録に署名できません",
        Key::ErrNoIdentityHint => "ユーザーに名前とメールアドレスを尋ね、work_vcs([\"config\", \"user.name\", \"<name>\"]) と work_vcs([\"config\", \"user.email\", \"<email>\"]) で設定してから work_record をもう一度呼んでください",
        Key::ErrPublishAuth => "共有先が認証情報を拒否しました",
        Key::ErrPublishAuthHint => "共有先へのアクセス権をユーザーに確認してもらい、work_publish をもう一度呼んでください",
        Key::ErrUnreachable => "共有先に接続できませんでした",
        Key::ErrUnreachableHint => "ネットワークか、work_vcs([\"remote\", \"-v\"]) で共有先を確認し、work_publish をもう一度呼んでください",
        Key::ErrTimeout => "操作が時間内に終わりませんでした",
        Key::ErrTimeoutHint => "{tool} をもう一度呼んでください。繰り返し時間切れになる場合はユーザーに尋ねてください",
        Key::ErrIssueNotFound => "見つかりません: {what}",
        Key::ErrIssueNotFoundHint => "issue 番号は issue_list で探してください",
        Key::ErrIssueUnreachable => "issue トラッカーが応答しませんでした",
        Key::ErrIssueUnreachableHint => "後で {tool} をもう一度呼んでください。work_observe と work_record は使えます",
        Key::ErrSecretInText => "拒否しました: `{field}` に秘密情報らしきものが含まれています ({rule})",
        Key::ErrSecretInTextHint => "`{field}` から秘密情報を取り除き (引用せず名前で言及し)、{tool} をもう一度呼んでください",
        Key::ErrTokenRefused => "Butler は {host} にトラッカーのトークンを送りませんでした: {why}",
        Key::ErrTokenPlainHttp => "暗号化されずに送られるため (平文の http)",
        Key::ErrTokenPlainHttpHint => "ユーザーにトラッカーの https アドレスを尋ねるか、暗号化なしのトークン送信を受け入れるなら Butler の環境に BUTLER_GITEA_INSECURE_HTTP=1 を設定してもらい、work_session_start をもう一度呼んでください",
        Key::ErrTokenUnnamedHost => "ユーザーがそのサーバーをトークンの送信先に指定していないため",
        Key::ErrTokenUnnamedHostHint => "{host} がユーザーのトラッカーか尋ねてください。そうなら Butler の環境の BUTLER_GITEA_HOSTS に追加してもらうか (プロジェクトのファイルではできません)、BUTLER_ISSUE_BACKEND=local で内蔵ストアを選んでもらい、work_session_start をもう一度呼んでください",
        Key::ErrBodyFieldsNeeded => "issue の本文には現在の状態、次にすること、ブロック要因が必要です",
        Key::ErrBodyFieldsNeededHint => "body、または current_state・next_action・blockers を指定して issue_create をもう一度呼んでください",
        Key::ErrNeedsApproval => "この操作は作業を取り返しのつかない形で失います ({total} 件): {lost}",
        Key::ErrNeedsApprovalHint => "ユーザーに data.would_lose を見せ、承認された場合だけ、同じ args と approval=data.approval で work_vcs をもう一度呼んでください",
        Key::ErrAgentUnavailable => "実装エージェントを起動できません: {reason}",
        Key::ErrAgentUnavailableHint => "ユーザーにエージェントのインストールか設定を頼むか、別のエージェントで run_implement を呼んでください",
        Key::ErrTaskRunner => "タスクを実行先で動かせませんでした: {reason}",
        Key::ErrTaskRunnerSetupHint => "ユーザーに実行先の設定か権限 (設定ファイルの [runner]、docs/kubernetes.md) を直してもらい、run_implement をもう一度呼んでください",
        Key::ErrTaskRunnerHint => "クラスタが伝えた理由をユーザーに伝え、タスクを受け入れられるようになったら run_implement をもう一度呼んでください",
        Key::ErrConfig => "Butler の issue トラッカー設定が使えません: {problem}",
        Key::ErrConfigHint => "ユーザーに設定 (.butler/config.toml か BUTLER_* 変数) を直してもらい、work_session_start をもう一度呼んでください",
        Key::ErrSecretsInWork => "記録しませんでした: {n} 件のファイルに秘密情報が含まれている可能性があります ({rules})",
        Key::ErrOwnTokenInWorkHint => "ファイルから Butler のトラッカートークンを取り除き (決して記録できません)、ほかの秘密情報も取り除いて (または .gitignore で無視して)、work_record をもう一度呼んでください",
        Key::ErrSecretsInWorkHint => "秘密情報を取り除いて (または .gitignore で無視して) work_record をもう一度呼んでください。本物の秘密情報がないとユーザーが確認した場合に限り、そのファイルを allow_sensitive に挙げて work_record を呼んでください",
        Key::ErrSecretsInRecords => "共有しませんでした: 共有しようとした {n} 件の記録に秘密情報が含まれている可能性があります ({rules})",
        Key::ErrSecretsInRecordsHint => "ユーザーに尋ねてください。共有は記録をそのまま送るため、後の記録で秘密情報を消しても役に立ちません。本物の秘密情報はユーザーが無効化し、それらの記録から取り除く必要があります (Butler は記録を書き換えません)。本物の秘密情報がないとユーザーが確認した場合に限り、パス (メッセージなら記録 id) を allow_sensitive に挙げて work_publish を呼んでください",
        Key::ErrVcsConflict => "操作がプロジェクトの現在の状態と競合します",
        Key::ErrVcsConflictHint => "work_observe が操作と競合したファイルを示します: ファイルを編集して競合を解決し、work_record を呼んで完了してください。やめる場合は work_observe の示す方法で中止してください",
        Key::ErrVcsAuth => "相手側が認証情報を拒否しました",
        Key::ErrVcsAuthHint => "ユーザーにアクセス権を確認してもらい、work_vcs をもう一度呼んでください",
        Key::ErrVcsUnreachable => "相手側に接続できませんでした",
        Key::ErrVcsUnreachableHint => "work_vcs([\"remote\", \"-v\"]) でアドレスを、またはネットワークを確認し、work_vcs をもう一度呼んでください",
        Key::ErrVcsIdentity => "作者の名前とメールアドレスが設定されていないため、新しい記録を作れません",
        Key::ErrVcsIdentityHint => "ユーザーに名前とメールアドレスを尋ね、work_vcs([\"config\", \"user.name\", \"<name>\"]) と work_vcs([\"config\", \"user.email\", \"<email>\"]) で設定してから work_vcs をもう一度呼んでください",
        Key::ErrVcsArguments => "操作の引数が噛み合っていません",
        Key::ErrVcsArgumentsHint => "data.message を読んで引数を直し、work_vcs をもう一度呼んでください",
        Key::ErrVcsNotFound => "操作が指す対象が存在しません",
        Key::ErrVcsNotFoundHint => "data.message を読み、存在するものを一覧してから (例: work_vcs([\"branch\", \"-a\"])、work_vcs([\"tag\"])、work_history) work_vcs をもう一度呼んでください",
        Key::ErrVcsFailed => "バージョン管理操作は成功しませんでした",
        Key::ErrVcsFailedHint => "data.message (バージョン管理ツール自身の言葉) を読み、引数かプロジェクトの状態を直して work_vcs をもう一度呼んでください",
        Key::ErrBareRepository => "そのプロジェクトには作業ファイルがありません (bare リポジトリ)",
        Key::ErrBareRepositoryHint => "作業ツリーのあるプロジェクトで work_session_start を呼んでください",
        Key::ErrOutsideProject => "パスはプロジェクトの中でなければなりません",
        Key::ErrOutsideProjectHint => "プロジェクトのルートからの相対パスを指定してください (work_observe の changed_files 参照)",
        Key::ErrHookRejectedHint => "チェックが報告した問題を直し (data.output 参照)、work_record をもう一度呼んでください。チェック自身がファイルを変えた場合 (フォーマッタ)、もう一度 work_record を呼べばそれも記録されます",
        Key::ErrNoSuchRecord => "そのような記録はありません",
        Key::ErrGitMissing => "このマシンには git がインストールされていません",
        Key::ErrGitMissingHint => "ユーザーに git のインストールを頼み、work_session_start をもう一度呼んでください",
        Key::ErrGitFailed => "バージョン管理操作が失敗しました",
        Key::ErrLedgerBusy => "別の Butler がこのプロジェクトの記録を処理中です",
        Key::ErrLedgerUnusable => "このプロジェクトの Butler 記録ストアが使えません",
        Key::ErrLedgerUnusableHint => "ユーザーに .git/butler/ledger.db の確認を頼んでください (退避すると Butler は新しく作り直します)",
        Key::ErrLedgerConflict => "記録ストアの内容が要求と食い違っています",
        Key::ErrLedgerFailed => "Butler の記録ストアが失敗しました",
        Key::ErrLabelNotFoundHint => "既存のラベル名を使うか (issue_list 参照)、label_names を省略してください",
        Key::ErrInvalidTitle => "タイトルは制御文字を含まない、空でない 1 行にしてください",
        Key::ErrIssueAuth => "issue トラッカーが Butler の認証情報を拒否しました",
        Key::ErrIssueConflict => "issue がその間に変わったか、今はこの操作を受け付けません",
        Key::ErrIssueConflictHint => "issue_read で読み直してからやり直してください",
        Key::ErrWriteUnconfirmed => "issue トラッカーが変更を確認しなかったため、適用済みの可能性があります",
        Key::ErrRateLimited => "issue トラッカーが Butler の呼び出し頻度を制限しています",
        Key::ErrWaitAMinute => "1 分待ち",
        Key::CheckIssueCreated => "issue_list で issue ができているか確認し",
        Key::CheckCommentThere => "issue_read(issue_id, last_n_comments=5) でコメントがあるか確認し",
        Key::CheckCommentGone => "issue_read(issue_id, last_n_comments=5) でコメントが消えたか確認し",
        Key::CheckChangeThere => "issue_read(issue_id) で変更が反映されているか確認し",
        Key::ErrHookRejected => "プロジェクトの {hook} チェックが記録を拒否しました",
        Key::ErrIndexLocked => "別のツールがリポジトリを変更中です (ロック保持 {secs} 秒)",
        Key::ErrIndexLockedHint => "少し待って {tool} をもう一度呼んでください。続き、ほかに何も動いていなければ、ユーザーに .git/index.lock の削除を頼んでください",
        Key::ErrButlerBusy => "別の Butler がこのプロジェクトのファイルを {secs} 秒使用中でした",
        Key::AgainInAMoment => "少ししてから {tool} をもう一度呼んでください",
        Key::ErrLabelNotFound => "不明なラベル: {names}",
        Key::ErrInvalidTitleHint => "短い 1 行のタイトルで {tool} をもう一度呼んでください",
        Key::ErrIssueAuthHint => "ユーザーに Butler のトラッカートークンを確認してもらい、{tool} をもう一度呼んでください",
        Key::ErrWaitSecs => "{secs} 秒待ち",
        Key::ErrRateLimitedHint => "{wait}、{tool} をもう一度呼んでください。work_observe と work_record は使えます",
        Key::CheckBeforeRepeating => "{check}てから {tool} をもう一度呼んでください (二重に実行しないため)",
        Key::ErrTooLarge => "issue トラッカーの応答が Butler の読む上限 ({mib} MiB) を超えています",
        Key::ErrTooLargeHint => "ユーザーにトラッカー上で直接読んでもらってください。ラベルで絞った issue_list なら応答が小さくなります",
        Key::ErrIssueFailed => "issue トラッカーが失敗しました",
        Key::IssueCreated => "issue #{issue} を作成しました。",
        Key::IssueCommented => "#{issue} にコメントしました。",
        Key::IssueCommentDeleted => "#{issue} のコメント {comment} を削除しました。",
        Key::IssueRetitled => "#{issue} のタイトルを更新しました。",
        Key::IssueBodyUpdated => "issue #{issue} の本文を更新しました。",
        Key::IssueReopened => "issue #{issue} を再オープンしました。",
        Key::IssueClosed => "issue #{issue} を閉じました。",
        Key::IssuesPageOf => "issue {total} 件中 {n} 件 ({page} ページ目)。",
        Key::IssuesPage => "issue {n} 件 ({page} ページ目)。",
        Key::NoRecordsYet => "記録はまだありません。",
        Key::NoRecordsTouch => "{path} に触れる記録はありません。",
        Key::RecordsTouching => "{path} に触れる記録 {n} 件。",
        Key::RecentRecords => "直近の記録 {n} 件。",
        Key::NothingUnrecordedNote => "記録するものはありません: 未記録の変更はありません。",
        Key::AlreadyRecordedNote => "記録するものはありません: 作業はすでに記録済みです。",
        Key::ClearedLockNote => "中断された以前の保存が残したロックを解除しました。",
        Key::AlreadyOnLine => "すでに `{line}` にいます。",
        Key::SwitchedFrom => "`{from}` から `{line}` に切り替えました。",
        Key::Switched => "`{line}` に切り替えました。",
        Key::LineStarted => "作業ライン `{line}` を始めました。",
        Key::LineStartedFrom => "`{from}` から作業ライン `{line}` を始めました。",
        Key::LineCarried => " 未記録の変更 {n} 件も一緒に移りました。",
        Key::LineAlreadyIn => "`{line}` には `{merged}` の内容がすべて入っています。",
        Key::LineBroughtIn => "`{merged}` の記録 {n} 件を `{line}` に取り込みました。",
        Key::LineMerged => "`{merged}` を `{line}` に統合しました (記録 {n} 件)。統合の記録は {id} です。",
        Key::PatchCut => "{total} バイト中 {shown} バイトで切りました。work_diff(path=…, level=\"full\") で絞り込んでください。",
        Key::PatchTruncated => "{of} の差分 (途中まで)。",
        Key::Patch => "{of} の差分。",
        Key::AutoRecorded => "{id} として記録",
        Key::AutoShared => "記録 {n} 件を共有",
        Key::AutoCommented => "#{issue} にコメント",
        Key::AutoClosed => "#{issue} をクローズ",
        Key::AutoJoin => "、",
        Key::AutoDone => "{steps}しました。",
        Key::AutoNothing => "記録・共有・コメントするものは残っていませんでした。",
        Key::AutoStaysOpen => " #{issue} は開いたままです (close=true で閉じます)。",
        Key::AutoNoIssue => " active issue はありません。",
        Key::HookUseInstead => "`{shown}` はブロックされました。代わりに {call} を使ってください。",
        Key::HookNoDedicatedTool => {
            "`{shown}` はブロックされました: このプロジェクトでは git を直接使いません。`git {sub}` 専用の Butler ツールはないので、{call} を使ってください。"
        }
        Key::HookDirectGit => {
            "`{shown}` はブロックされました: このプロジェクトでは git を直接使いません。代わりに Butler のツールを使ってください: {overview}。"
        }
        Key::HookDynamic => {
            "`{word}` はブロックされました: 実行するプログラムが実行時まで分からず、このコマンド行は git に触れています。コマンドを書き下すか、Butler のツールを使ってください: {overview}。"
        }
        Key::HookOverviewItem => "{git} には {tool}()",
        Key::HookOverviewOther => "その他の git コマンドには work_vcs([...])",
        Key::BlockOpConflicts => "{op} が {n} 件のファイルの競合で止まっています",
        Key::GoalContinueRebase => "リベースを続けてください",
        Key::GoalContinueAm => "パッチの適用を続けてください",
        Key::GoalFinishOp => "{op} を完了してください",
        Key::GoalSaveResolution => "解決内容を保存してください",
        Key::HintBisectReset => "記録する前に work_vcs([\"bisect\", \"reset\"]) で終了してください",
        Key::HintEditConflicts => "競合したファイルを編集して正しい内容を残し、競合マーカーを取り除いたうえで、work_record を呼んで{goal}",
        Key::HintConflictsResolved => "競合は解決済みのようです: work_record を呼んで{goal}",
        Key::HintCallRecordTo => "work_record を呼んで{goal}",
        Key::HintOrGiveUp => "{first}。やめる場合は {call} を使ってください",
        Key::OpFinishedAsRecord => "{op} を記録 {id} として完了しました。",
        Key::OpFinished => "{op} を完了しました。",
        Key::OpPausedAgain => "{op} は進みましたが再び止まりました。続けるには work_record を呼んでください。",
        Key::ErrHookRejectedPublish => "プロジェクトの {hook} チェックが共有を拒否しました",
        Key::ErrHookRejectedOther => "プロジェクトの {hook} チェックが操作を拒否しました",
        Key::ErrHookRejectedPublishHint => "チェックが報告した問題を直し (data.output 参照)、修正を work_record で記録してから work_publish をもう一度呼んでください",
        Key::ErrHookRejectedOtherHint => "チェックが報告した問題を直し (data.output 参照)、{tool} をもう一度呼んでください",
        Key::ReqResolveConflicts => "{n} 件のファイルの競合を解決し (マーカーを取り除く: {list})、work_record を呼んで{goal}",
        Key::ReqConflictsResolved => "競合は解決済みのようです: work_record を呼んで{goal}",
        Key::ReqRecordWill => "work_record を呼んで{goal}",
        Key::ReqGiveUpInstead => "やめる場合: {call}",
        Key::ReqBisect => "bisect が進行中です: 記録する前に終了してください",
        Key::ReqBisectHint => "work_vcs([\"bisect\", \"reset\"]) で終了してください",
        Key::ReqDetached => "作業が作業ライン上にありません: ここで新しいラインを始めてください (未記録の作業も一緒に移ります)",
        Key::ReqDetachedHint => "または work_switch_line(name=…) で既存のラインに戻ってください",
        Key::ErrMarkersRemain => "記録していません: {n} 件のファイルに競合マーカーが残っています: {list}",
        Key::ErrMarkersRemainHint => "それらのファイルを編集して正しい内容を残し、<<<<<<< ======= >>>>>>> の行を取り除いてから、もう一度 work_record を呼んで{goal}",
        Key::WarnStrayMarkers => "警告: 記録した {files} 件のファイルに競合マーカー (<<<<<<< ======= >>>>>>>) があり、進行中の競合はありません: {list}{more}。残り物なら取り除いてもう一度記録してください。",
        Key::ErrContractFields => "Task Contract に誤ったフィールドが {n} 件あります: {problems}",
        Key::ErrContractFieldsHint => "data.fields に挙げたフィールドを直して submit_task をもう一度呼んでください。契約の形は get_skill_usage(\"butler\") で分かります",
        Key::ErrStepsRefused => "拒否しました: 手順の問題が {n} 件あります: {problems}",
        Key::ErrStepsNotTaught => "教えられていません: 手順の問題が {n} 件あります: {problems}",
        Key::ErrStepsHint => "data.fields に挙げた箇所を直して teach をもう一度呼んでください。手順の種類は get_skill_usage(\"butler\") で分かります",
        Key::ErrUnknownSkill => "`{intent}` (対象 `{target}`) の手順も機能も Butler は知りません",
        Key::ErrUnknownSkillHint => "Butler が知っていることは list_skills で分かります。教えるには delegation_mode \"teach_if_unknown\" で提出してください",
        Key::ErrNoTask => "タスク `{id}` はありません",
        Key::ErrNoTaskHint => "タスク ID は submit_task の応答にあります",
        Key::ErrTaskWrongState => "タスク {task} は {expected} ではなく {status} です",
        Key::ErrTaskWrongStateHint => "get_status(task_id=\"{task}\") で状況が分かります",
        Key::ErrNoSkill => "スキル `{name}` はありません",
        Key::ErrNoSkillHint => "スキルは list_skills で、共通の契約は get_skill_usage(\"butler\") で分かります",
        Key::ErrOperationFailed => "操作を実行できませんでした",
        Key::ErrDelegationConfig => "Butler の委任設定が使えません: {problem}",
        Key::ErrDelegationConfigHint => ".butler/config.toml の [delegation] または [mcp_servers] を直すようユーザーに頼んでください",
        Key::ErrOpStoppedAgain => "解決内容を保存し{saved}、{op} は進みましたが、{n} 件のファイルの競合で再び止まりました",
        Key::ErrOpStoppedAgainSaved => " (記録 {id})",
        Key::ErrOpStoppedAgainHint => "それらのファイルを編集して競合を解決し、続けるには work_record をもう一度呼んでください。やめる場合は {call} を使ってください",
        Key::ErrLineWouldLose => "ラインを切り替えると、無視されているファイル {total} 件が上書きされます: {list}",
        Key::ErrLineWouldLoseHint => "data.would_lose をユーザーに見せてください。ユーザーはそれらを移動するか、work_vcs({args}) (承認を求めます) で削除できます。その後 {tool} をもう一度呼んでください",
        Key::GuardWeakened => "弱められたテスト行 {n} 件",
        Key::GuardStubs => "スタブ {n} 件",
        Key::GuardAnd => "{a}と{b}",
        Key::TaskPassedAllowed => "タスク {task} は {n} 回の試行でチェックを通りました。ただしタスクが許した{guards}があります (weakened_tests と stubs 参照)。作業はライン {line} に記録されています。task_accept の前に証跡を読むか、task_discard で破棄してください。",
        Key::TaskSucceeded => "タスク {task} は {n} 回の試行で成功しました。作業はライン {line} に記録されています。証跡を読んでから task_accept で取り込むか、task_discard で破棄してください。",
        Key::TaskFailedGuards => "タスク {task} は {n} 回の試行の後に失敗しました: 最後の試行に{guards}が残っています (証跡の weakened_tests と stubs 参照)。もう一度頼むか、自分で行うか、task_discard で破棄してください。",
        Key::TaskFailed => "タスク {task} は {n} 回の試行の後に失敗しました。理由は証跡にあります。もう一度頼むか、自分で行うか、task_discard で破棄してください。",
        Key::TaskCancelled => "タスク {task} は取り消されました。ライン {line} は task_discard まで残ります。",
        Key::TaskAcceptedMerged => "タスク {task} を取り込みました: {n} 件の記録がマージ記録とともに現在のラインに入りました。",
        Key::TaskAccepted => "タスク {task} を取り込みました: {n} 件の記録が現在のラインに入りました。",
        Key::TaskDiscarded => "タスク {task} を破棄しました。作業は別に保管され、復元できます。",
        Key::TaskNotesBody => "タスク {task} の実装エージェントからのメモ:",
        Key::OpApprovalStale => "承認が今行われる内容と合わなくなった (内容が変わったか、承認の期限が切れた) ため、何も実行していません。{summary}",
        Key::SkillCommonUsage => "すべてのタスクに共通の契約と、teach が受け付ける手順の種類です。",
        Key::SkillUsage => "`{name}` の提出方法: data.example を埋めて submit_task に渡してください。",
        Key::OpAtStep => " (手順 {n})",
        Key::OpSucceeded => "タスク {task} (`{intent}`) は成功しました: {n} 個の手順が通りました{verifiers}。",
        Key::OpVerifiersPassed => "。検証も通りました",
        Key::OpProcedureStatus => " 手順書 {id} は {status} です。",
        Key::OpWhyTimedOut => "制限時間を超えました",
        Key::OpWhyRefused => "Butler が手順を拒否しました",
        Key::OpWhyStepFailed => "`{what}` が通りませんでした",
        Key::OpWhyAStepFailed => "手順が通りませんでした",
        Key::OpWhyVerifiers => "検証が通りませんでした",
        Key::OpFailed => "タスク {task} (`{intent}`) は失敗しました{at}: {why}。理由は証跡にあります。よりよい手順を教えるか、別の方法で行ってください。",
        Key::OpDenied => "タスク {task} (`{intent}`) は終了しました: ユーザーが承認を拒否したため、それ以上は実行していません。",
        Key::OpCancelled => "タスク {task} (`{intent}`) は取り消されました{at}。それ以降は実行していません。",
        Key::OpNoProcedure => "`{intent}` (対象 `{target}`) の手順を Butler は知りません。teach(task_id=\"{task}\", steps=[…]) で教えてください (手順の種類は get_skill_usage(\"butler\") で分かります)。教えるとタスクが実行されます。",
        Key::OpNeedsInput => "タスク {task} (`{intent}`) には入力が必要です。",
        Key::OpWaitsApproval => "タスク {task} はユーザーの承認を待っています ({reference}): {operation}。ユーザーに確認し、approve(task_id=\"{task}\", decision=\"approve\") または decision=\"deny\" を呼んでください。",
        Key::OpWaitsApprovalBare => "タスク {task} はユーザーの承認を待っています。",
        Key::NoteLargeFiles => "非常に大きなファイル: {list}{more}。記録して共有すると履歴に永久に残ります。生成物やデータなら、work_record の前に .gitignore に加えてください。",
        Key::NoteAndMore => " ほか {n} 件",
        Key::NoteNestedRepository => "{names} はプロジェクト内の別のリポジトリです (独自の .git があります)。記録には含まれません。見えなくするには .gitignore に加えてください。ここでそのファイルを記録するには、その .git を削除する (その履歴は失われます) かサブモジュールにするよう、ユーザーに頼んでください。",
        Key::NoteSubmoduleWork => "{names} の中に未記録の作業があります: 独自の履歴を持つサブモジュールで、このプロジェクトの記録には保存されません。そちらで記録し (そのディレクトリで work_session_start)、その後ここで記録してサブモジュールの新しいコミットを保存してください。",
        Key::NotePreparedMessage => "git が {op} 用に用意したメッセージで記録しました: 「{subject}」。",
        Key::ErrTaskLine => "`butler/task-{task}` はタスク {task} のラインです。そのエージェントが別の場所で作業しています",
        Key::ErrTaskLineHint => "task_accept(task_id=\"{task}\") で取り込むか、task_discard で破棄してください",
        Key::ErrLineNoRecords => "現在のラインにはまだ記録がありません",
        Key::ErrLineNoRecordsHint => "まず work_record で作業を記録し、work_merge_line をもう一度呼んでください",
        Key::NoteScanPartial => "共有前に秘密情報を確認したのは、{total} 件の記録のうち新しい {scanned} 件だけです。",
        Key::NoteVcsConfigPutBack => "work_vcs が変えてはならない設定を元に戻しました: {keys}。",
        Key::ErrApprovalMismatch => "その承認は、この引数と今失われる内容に合わないか、使用済みか、期限切れです",
        Key::ErrApprovalMismatchHint => "approval なしで work_vcs をもう一度呼んで今失われる内容を確かめ、ユーザーにもう一度確認してください",
        Key::SkipNothingToRecord => "記録するものがありません",
        Key::SkipNoActiveIssue => "作業中の issue がありません",
        Key::SkipNoNewRecords => "まとめる新しい記録がありません",
        Key::NoteUndoable => "work_undo(operation={id}) で取り消せます。",
        Key::OplogListed => "操作 {n} 件（新しい順）。work_undo(operation) でその操作の前の状態に戻せます。",
        Key::OplogEmpty => "記録された操作はまだありません。",
        Key::Undone => "操作 {id}（{tool}）を取り消しました。ファイル・インデックス・参照はその前の状態です。work_undo(operation={undo}) でこの取り消しを取り消せます。",
        Key::UndoneAlready => "操作 {id}（{tool}）について取り消すものはありません。プロジェクトはすでにその前の状態です。",
        Key::UndoneAlso => "その後の操作も一緒に取り消しました: {ids}。",
        Key::ErrUndoChangedSince => "何も取り消していません。操作 {id} の後の作業が失われます（{names}）",
        Key::ErrUndoChangedSinceHint => "先にその作業を記録する（work_record の後で両方を取り消す）か、失ってよいかユーザーに確認してください",
        Key::ErrUndoNoOperation => "操作 {id} は記録にありません",
        Key::ErrUndoNoOperationHint => "取り消せる操作は work_oplog で一覧できます",
        Key::ErrUndoUnfinished => "操作 {id} は実行中か、終わらずに止まりました",
        Key::ErrUndoUnfinishedHint => "終わるのを待ってもう一度試してください。プロジェクトの状態は work_observe で確認できます",
        Key::ArgOutOfRange => "{n} は範囲外です。{min} から {max} までで指定してください",
        Key::ArgNotBetween => "{n} は {min} から {max} の間にありません",
        Key::ArgMessageEmpty => "空です。作業の内容を一行で書いてください",
        Key::ArgLongerThanChars => "{max} 文字を超えています",
        Key::ArgLongerThanBytes => "{max} バイトを超えています",
        Key::ArgNulCharacter => "NUL 文字を含んでいます",
        Key::ArgNul => "NUL を含んでいます",
        Key::ArgEmpty => "空です",
        Key::ArgTooManyIssues => "結び付けられる issue は {max} 件までです",
        Key::ArgNotIssueNumber => "{n} は issue 番号 (正の整数) ではありません",
        Key::ArgNotOperationId => "{n} は操作 id (正の整数) ではありません",
        Key::ArgNotPage => "{p} はページ番号ではありません",
        Key::ArgRecordId => "20260612-001-kqrt のような記録 id を指定してください (work_history で確認できます)",
        Key::ArgMergeCurrentLine => "`{name}` は今の作業ラインです。取り込む別の作業ラインを指定してください",
        Key::ArgGiveMessage => "記録のメッセージ (作業の内容を一行で) を指定してください",
        Key::NoteSparseRecorded => "スパースチェックアウトのディレクトリ外のファイル {n} 件も記録しました: {list}。",
        Key::NoteHookChangedMeanwhile => "記録中にプロジェクトの {hooks} フックがファイル {n} 件を変更しましたが、その変更は保存されていません: {list}。記録には変更前の内容が入っています。フックの変更は未記録なので work_record で保存してください。",
        Key::NoteMessageRewritten => "プロジェクトの commit-msg フックがメッセージを書き換えました。履歴と記録には書き換え後のものが残ります。",
        Key::NoteTrailerDropped => "Butler の記録トレーラーは消されましたが、Butler はコミットから記録を識別できます。",
        Key::NoteIssueRefsDropped => "issue の参照 {refs} が消されたため、トラッカーはこれらをこの記録に結び付けません。",
        Key::AndMore => " ほか {more} 件",
        Key::ArgProjectPath => "プロジェクトの絶対パスを指定してください",
        Key::ArgNotAbsolute => "`{root}` は絶対パスではありません",
    }
}

-- Neovim: starts `dagc --lsp` (Neovim's built-in LSP client) for each .dag
-- buffer, one server per project folder (the nearest one holding .git, else
-- the file's own). Off with `vim.g.dagc_lsp = false`; the dagc to run with
-- `vim.g.dagc_lsp_cmd = { '/path/to/dagc', '--lsp' }`; settings (a trace
-- for hover's measured times, -I folders) with
-- `vim.g.dagc_lsp_settings = { profile = 'trace.json', importDirs = { 'shared' } }`.
-- grammar/editors/README.md, docs/build-integration.md "In your editor".
if vim.g.dagc_lsp == false or not vim.lsp then return end
local cmd = vim.g.dagc_lsp_cmd or { 'dagc', '--lsp' }
if vim.fn.executable(cmd[1]) ~= 1 then return end
local buf = vim.api.nvim_get_current_buf()
local file = vim.api.nvim_buf_get_name(buf)
local dir = vim.fn.fnamemodify(file, ':p:h')
local git = vim.fn.finddir('.git', dir .. ';')
local root = git ~= '' and vim.fn.fnamemodify(git, ':p:h:h') or dir
local config = {
  name = 'dagc',
  cmd = cmd,
  root_dir = root,
  init_options = vim.g.dagc_lsp_settings or {},
}
if vim.lsp.start then -- Neovim 0.8 and later: reuses a running server
  vim.lsp.start(config)
  return
end
-- Neovim 0.7: one client per root, kept here
_G.dagc_lsp_clients = _G.dagc_lsp_clients or {}
local id = _G.dagc_lsp_clients[root]
if not id or not vim.lsp.get_client_by_id(id) then
  id = vim.lsp.start_client(config)
  _G.dagc_lsp_clients[root] = id
end
if id then vim.lsp.buf_attach_client(buf, id) end
